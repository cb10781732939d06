#!/usr/bin/env node
/** agent-complete: model-backed completion (node-llama-cpp). Without a model it runs degraded and complete-lite serves. */
import { agentEntry } from "../lib/runtime/entry.js";

await agentEntry("complete", import.meta.url, async ({ oneShot }) => {
  const [{ modelEngine }, { LatestWins }, { bundledManifest }, { createCompleteAgent }] = await Promise.all([
    import("../lib/llm/select.js"),
    import("../../protocol/transport/latest.js"),
    import("../lib/runtime/manifest.js"),
    import("./agent.js"),
  ]);
  const manifest = bundledManifest("complete", import.meta.url);
  return createCompleteAgent(manifest, modelEngine(process.env, manifest.max_concurrent), new LatestWins(), {
    oneShot,
  });
});
