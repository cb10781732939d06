import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { httpRequest } from "../../protocol/client.js";
import { DEFAULT_LIMITS } from "../../protocol/limits.js";
import { serve, type Served } from "../../scripts/conformance/process.js";
import { DUMMY, tempDir } from "../helpers.js";

// The server closed the connection right after its 413 while the client was still writing the body:
// the client failed with "write EPIPE" instead of reading the answer (15 of 40 tries under load).
let server: Served;
let cleanup: () => void;
let sock: string;
beforeAll(async () => {
  const t = tempDir();
  cleanup = t.cleanup;
  sock = join(t.dir, "r.sock");
  server = await serve(DUMMY, sock);
});
afterAll(async () => {
  await server.stop();
  cleanup();
});

it("an oversized body always gets its 413, never EPIPE, and the server keeps serving", async () => {
  const big = JSON.stringify({ action: "echo", context: { source_code: "x".repeat(DEFAULT_LIMITS.maxBodyBytes + 10) }, constraints: {} });
  for (let i = 0; i < 20; i++) {
    const r = await httpRequest(sock, { body: big, timeoutMs: 15_000 });
    expect(r.status).toBe(413);
  }
  const ok = await httpRequest(sock, { body: JSON.stringify({ action: "echo", context: {}, constraints: {} }) });
  expect(ok.status).toBe(200);
});
