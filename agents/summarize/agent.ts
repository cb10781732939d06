/** agent-summarize: a structured outline of a module (or of the function at the cursor) and a short extractive summary. */
import { ParseCache } from "../lib/code/cache.js";
import { warmParser } from "../lib/code/parse.js";
import { TokenCounter } from "../lib/llm/budget.js";
import { modelEngine } from "../lib/llm/select.js";
import { bundledManifest } from "../lib/runtime/manifest.js";
import { loadLanguage } from "../lib/code/languages/registry.js";
import type { AgentDefinition } from "../lib/runtime/types.js";
import { createSummarize } from "./handler.js";

// Same loading code as complete: AIP_MODEL (and AIP_MODEL_THREADS, …); without a model the summary is extractive.
const host = modelEngine(process.env, 2);
let counter: TokenCounter | undefined;

export const summarize: AgentDefinition = {
  manifest: bundledManifest("summarize", import.meta.url),
  help: `Answers the action "summarize": a module's outline, its public export list (export * and re-exports
followed into the workspace, overloads merged) and a prose summary.
Request: context.source_code, or context.file_path + context.workspace_root; context.language optional.
Broken source is answered with payload.partial and payload.diagnostics. See docs/agents.md.`,
  handlers: { summarize: createSummarize(new ParseCache(), { host, counter: () => (counter ??= new TokenCounter()) }) },
  warmup: async (log) => {
    // Python's grammar (wasm) loads in the background: the first .py request then finds it compiled.
    void loadLanguage("python").catch(() => undefined);
    await host.load(log);
    if (host.ready) {
      counter = new TokenCounter((t) => host.tokenize(t));
      await host.selfProbe();
    }
  },
  preload: warmParser,
  // A summarize without a model is not degraded: the extractive summary is its designed behaviour.
  health: () => ({ summary_mode: host.ready ? "model" : "extractive", ...host.health() }),
  dispose: () => host.dispose(),
};
