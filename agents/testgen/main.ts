#!/usr/bin/env node
/** agent-testgen: a vitest / jest / node:test file for the function or method at the cursor, formatted by prettier and parse-checked. */
import { ParseCache } from "../lib/code/cache.js";
import { modelConfig } from "../lib/llm/config.js";
import { ModelHost } from "../lib/llm/host.js";
import { bundledManifest } from "../lib/runtime/manifest.js";
import { runAgent } from "../lib/runtime/run.js";
import type { AgentDefinition } from "../lib/runtime/types.js";
import { createTestgen, warmPrettier } from "./handler.js";

// AIP_MODEL (and AIP_MODEL_THREADS, …) as for complete and summarize; without a model the deterministic strategies alone apply.
const host = new ModelHost(modelConfig({}, process.env, 2));

export const testgen: AgentDefinition = {
  manifest: bundledManifest("testgen", import.meta.url),
  handlers: { testgen: createTestgen(new ParseCache(), host) },
  warmup: async (log) => {
    await warmPrettier();
    await host.load(log);
  },
  health: () => ({ proposals: host.ready ? "model" : "none", ...host.health() }),
  dispose: () => host.dispose(),
};

await runAgent(testgen);
