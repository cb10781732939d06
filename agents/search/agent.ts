/** agent-search: ranked retrieval (BM25 with symbol boosts) over a workspace's code and docs, incrementally indexed. */
import { bundledManifest } from "../lib/runtime/manifest.js";
import { loadLanguage } from "../lib/code/languages/registry.js";
import type { AgentDefinition } from "../lib/runtime/types.js";
import { createSearch } from "./handler.js";
import { IndexRegistry } from "./registry.js";

const registry = new IndexRegistry();

export const search: AgentDefinition = {
  manifest: bundledManifest("search", import.meta.url),
  help: `Answers the action "search": the workspace's symbols and text ranked for a developer's words
(BM25F over identifier-aware, stemmed tokens, with code synonyms).
Request: context.workspace_root (absolute, inside AIP_WORKSPACE_ROOTS) and context.query;
constraints.limit, constraints.languages optional. See docs/agents.md.`,
  handlers: { search: createSearch(registry) },
  warmup: () => {
    // Python's grammar (wasm) loads in the background: the first .py request then finds it compiled.
    void loadLanguage("python").catch(() => undefined);
    return Promise.resolve();
  },
  health: () => ({ workspaces: registry.size }),
};
