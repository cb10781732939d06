/** agent-diagnose: a file's errors with fixes that are checked before they are offered, or the cause of a failure in tool output. */
import { modelConfig } from "../lib/llm/config.js";
import { ModelHost } from "../lib/llm/host.js";
import { TypedEngine } from "../lib/completion/engine.js";
import { PyrightEngine } from "../lib/completion/python/pyright.js";
import { ParseCache } from "../lib/code/cache.js";
import { warmParser } from "../lib/code/parse.js";
import { bundledManifest } from "../lib/runtime/manifest.js";
import type { AgentDefinition } from "../lib/runtime/types.js";
import { createDiagnose } from "./handler.js";

const typed = new TypedEngine();
// The Python checker: pyright per workspace, the same engine complete-lite keeps.
const pyright = new PyrightEngine();
// Same loading code as complete and summarize: AIP_MODEL; without a model the diagnosis is complete without its explanation.
const host = new ModelHost(modelConfig({}, process.env, 2));

export const diagnose: AgentDefinition = {
  manifest: bundledManifest("diagnose", import.meta.url),
  help: `Answers the action "diagnose". A file: context.workspace_root + context.file_path (+ context.source_code
for an unsaved buffer): its syntax and type errors from the workspace's TypeScript checker, each with the
language service's fixes and the agent's own, every fix checked on an in-memory copy (verified: true when
the error is gone and none appeared). Tool output: context.output (or context.output_path, a log file in
the workspace): tsc, vitest, jest, node:test, a Node stack trace or a Python traceback; frames mapped to
the workspace (through source maps for built output) and the innermost one named as the likely cause.
A Python file (.py): pyright's diagnostics for the workspace (no code fixes; AIP_PYTHON names the interpreter).
Environment: AIP_MODEL (an explanation and a model fix, checked the same way), AIP_TYPED_* (the checker).
See docs/agents.md.`,
  handlers: { diagnose: createDiagnose(typed, { host }, new ParseCache(), pyright) },
  warmup: async (log) => {
    await host.load(log);
  },
  preload: warmParser,
  health: () => ({ ...typed.health(), ...pyright.health(), ...host.health() }),
  dispose: async () => {
    await typed.close();
    pyright.close();
    await host.dispose();
  },
};
