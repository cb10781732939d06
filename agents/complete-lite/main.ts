#!/usr/bin/env node
/** agent-complete-lite: completion at the cursor without a model: the checker's answer when it has one in time, the syntactic engine's otherwise. */
import { bundledManifest } from "../lib/runtime/manifest.js";
import { runAgent } from "../lib/runtime/run.js";
import type { AgentDefinition } from "../lib/runtime/types.js";
import { ParseCache } from "../lib/code/cache.js";
import { TypedEngine } from "../lib/completion/engine.js";
import { createCompleteLite } from "../lib/completion/handler.js";

const typed = new TypedEngine();

export const completeLite: AgentDefinition = {
  manifest: bundledManifest("complete-lite", import.meta.url),
  handlers: { complete: createCompleteLite(new ParseCache(), typed) },
  health: () => typed.health(),
  dispose: () => typed.close(),
};

await runAgent(completeLite);
