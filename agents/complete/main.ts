#!/usr/bin/env node
/** agent-complete: model-backed completion (node-llama-cpp). Without a model it runs degraded and complete-lite serves. */
import { modelEngine } from "../lib/llm/select.js";
import { LatestWins } from "../../protocol/transport/latest.js";
import { bundledManifest } from "../lib/runtime/manifest.js";
import { runAgent } from "../lib/runtime/run.js";
import { createCompleteAgent } from "./agent.js";

const manifest = bundledManifest("complete", import.meta.url);
const host = modelEngine(process.env, manifest.max_concurrent);
await runAgent(createCompleteAgent(manifest, host, new LatestWins()));
