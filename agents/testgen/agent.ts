/** agent-testgen: a vitest / jest / node:test file for the function or method at the cursor, formatted by prettier and parse-checked. */
import { ParseCache } from "../lib/code/cache.js";
import { warmParser } from "../lib/code/parse.js";
import { modelEngine } from "../lib/llm/select.js";
import { bundledManifest } from "../lib/runtime/manifest.js";
import { loadLanguage } from "../lib/code/languages/registry.js";
import type { AgentDefinition } from "../lib/runtime/types.js";
import { createTestgen, warmPrettier } from "./handler.js";

// AIP_MODEL (and AIP_MODEL_THREADS, …) as for complete and summarize; without a model the deterministic strategies alone apply.
const host = modelEngine(process.env, 2);

export const testgen: AgentDefinition = {
  manifest: bundledManifest("testgen", import.meta.url),
  help: `Answers the action "testgen": a test file for one function, with its import, asserting cases from
its JSDoc @example results and its parameter types, typechecked against the workspace and, when the
workspace has vitest or jest, run in a child process (constraints.run_timeout_ms).
Request: context.source_code or context.file_path + context.workspace_root; the function by
context.cursor or constraints.function; constraints.framework optional.
Environment: AIP_MODEL (a GGUF model that proposes extra cases; optional). See docs/agents.md.`,
  handlers: { testgen: createTestgen(new ParseCache(), host) },
  warmup: async (log) => {
    // Python's grammar (wasm) loads in the background: the first .py request then finds it compiled.
    void loadLanguage("python").catch(() => undefined);
    await host.load(log);
  },
  preload: warmParser,
  // Prettier's parsers load after ready: the first request usually finds them loaded.
  warmLater: () => {
    void warmPrettier().catch(() => undefined);
  },
  health: () => ({ proposals: host.ready ? "model" : "none", ...host.health() }),
  dispose: () => host.dispose(),
};
