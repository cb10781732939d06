#!/usr/bin/env node
/** agent-complete: model-backed completion (node-llama-cpp). Without a model it runs degraded and complete-lite serves. */
import { modelConfig } from "../llm/config.js";
import { ModelHost } from "../llm/host.js";
import { LatestWins } from "../llm/latest.js";
import { bundledManifest } from "../runtime/manifest.js";
import { runAgent } from "../runtime/run.js";
import { createCompleteAgent } from "./agent.js";

const manifest = bundledManifest("complete", import.meta.url);
const host = new ModelHost(modelConfig({}, process.env, manifest.max_concurrent));
await runAgent(createCompleteAgent(manifest, host, new LatestWins()));
