import { describe, expect, it } from "vitest";
import { readManifestFile } from "../../../protocol/contract/manifest.js";
import { LatestWins } from "../../../protocol/transport/latest.js";
import { createLogger } from "../../../protocol/util/log.js";
import { createCompleteAgent } from "../../../agents/complete/agent.js";
import { encoderLoaded } from "../../../agents/lib/llm/budget.js";
import { modelEngine } from "../../../agents/lib/llm/select.js";

describe("agent-complete's warm-up", () => {
  it("leaves the tokenizer's encoder unloaded when there is no model to count a prompt for", async () => {
    const manifest = readManifestFile(new URL("../../../manifests/complete.json", import.meta.url));
    const env = { PATH: process.env.PATH ?? "" };
    const host = modelEngine(env, manifest.max_concurrent);
    const agent = createCompleteAgent(manifest, host, new LatestWins());
    const lines: Record<string, unknown>[] = [];
    const log = createLogger({
      agentName: "complete",
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    await agent.warmup!(log);
    expect(host.ready).toBe(false);
    expect(encoderLoaded()).toBe(false);
    expect(lines.find((l) => l.event === "warmup")).toMatchObject({ model_state: "none", tiktoken_ratio: null });
    expect(agent.health!()).toMatchObject({ status: "degraded" });
    await agent.dispose?.();
  });
});
