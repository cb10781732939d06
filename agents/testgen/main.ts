#!/usr/bin/env node
/** agent-testgen: a vitest / jest / node:test file for the function or method at the cursor, formatted by prettier and parse-checked. */
import { bundledManifest } from "../lib/runtime/manifest.js";
import { runAgent } from "../lib/runtime/run.js";
import type { AgentDefinition } from "../lib/runtime/types.js";
import { createTestgen, warmPrettier } from "./handler.js";

export const testgen: AgentDefinition = {
  manifest: bundledManifest("testgen", import.meta.url),
  handlers: { testgen: createTestgen() },
  warmup: warmPrettier,
};

await runAgent(testgen);
