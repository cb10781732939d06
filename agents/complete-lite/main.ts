#!/usr/bin/env node
/** agent-complete-lite: completion at the cursor without a model (symbols in scope, members after `.`, keyword snippets). */
import { bundledManifest } from "../runtime/manifest.js";
import { runAgent } from "../runtime/run.js";
import type { AgentDefinition } from "../runtime/types.js";
import { createCompleteLite } from "./handler.js";

export const completeLite: AgentDefinition = {
  manifest: bundledManifest("complete-lite", import.meta.url),
  handlers: { complete: createCompleteLite() },
};

await runAgent(completeLite);
