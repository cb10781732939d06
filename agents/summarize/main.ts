#!/usr/bin/env node
/** agent-summarize: a structured outline of a module (or of the function at the cursor) and a short extractive summary. */
import { bundledManifest } from "../runtime/manifest.js";
import { runAgent } from "../runtime/run.js";
import type { AgentDefinition } from "../runtime/types.js";
import { createSummarize } from "./handler.js";

export const summarize: AgentDefinition = {
  manifest: bundledManifest("summarize", import.meta.url),
  handlers: { summarize: createSummarize() },
};

await runAgent(summarize);
