#!/usr/bin/env node
/** agent-complete-lite: completion at the cursor without a model (symbols in scope, members after `.`, keyword snippets). */
import { bundledManifest } from "../lib/runtime/manifest.js";
import { runAgent } from "../lib/runtime/run.js";
import type { AgentDefinition } from "../lib/runtime/types.js";
import { createCompleteLite } from "../lib/completion/handler.js";

export const completeLite: AgentDefinition = {
  manifest: bundledManifest("complete-lite", import.meta.url),
  handlers: { complete: createCompleteLite() },
};

await runAgent(completeLite);
