import { expect, it } from "vitest";
import { httpRequest } from "../../protocol/transport/client.js";
import { AGENT_LIMITS } from "../../protocol/contract/limits.js";
import { DUMMY, servedAgent } from "../helpers.js";

// The server closed the connection right after its 413 while the client was still writing the body:
// the client failed with "write EPIPE" instead of reading the answer (15 of 40 tries under load).
const agent = servedAgent(DUMMY);

it("an oversized body always gets its 413, never EPIPE, and the server keeps serving", async () => {
  const big = JSON.stringify({
    action: "echo",
    context: { source_code: "x".repeat(AGENT_LIMITS.maxBodyBytes + 10) },
    constraints: {},
  });
  for (let i = 0; i < 20; i++) {
    const r = await httpRequest(agent.socket, { body: big, timeoutMs: 15_000 });
    expect(r.status).toBe(413);
  }
  const ok = await httpRequest(agent.socket, {
    body: JSON.stringify({ action: "echo", context: {}, constraints: {} }),
  });
  expect(ok.status).toBe(200);
});
