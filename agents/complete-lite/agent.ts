/** agent-complete-lite: completion at the cursor without a model: the checker's answer when it has one in time, the syntactic engine's otherwise. */
import { bundledManifest } from "../lib/runtime/manifest.js";
import type { AgentDefinition } from "../lib/runtime/types.js";
import { ParseCache } from "../lib/code/cache.js";
import { warmParser } from "../lib/code/parse.js";
import { TypedEngine } from "../lib/completion/engine.js";
import { createCompleteLite } from "../lib/completion/handler.js";
import { PyrightEngine } from "../lib/completion/python/pyright.js";

const typed = new TypedEngine();
const pyright = new PyrightEngine();

export const completeLite: AgentDefinition = {
  manifest: bundledManifest("complete-lite", import.meta.url),
  help: `Answers the action "complete" without a model: members from the receiver's type (a TypeScript
language service per workspace; pyright for Python), identifiers in scope, keywords; a syntactic fast path when the
checker is not ready in time (payload.engine says which).
Request: context.source_code and context.cursor; context.file_path + context.workspace_root for types.
Environment: AIP_TYPED_MAX_WORKSPACES (3), AIP_TYPED_HEAP_MB (768), AIP_TYPED_BUDGET_MS (250).
See docs/agents.md.`,
  handlers: { complete: createCompleteLite(new ParseCache(), typed, pyright) },
  preload: warmParser,
  health: () => ({ ...typed.health(), ...pyright.health() }),
  dispose: async () => {
    pyright.close();
    await typed.close();
  },
};
