// Regression: health probes were meant to use a fresh connection but went through Node's global
// keep-alive agent, so after an agent's socket file was deleted the probe reused an old connection and
// reported the agent healthy while no new connection could reach it (found by the fault suite:
// "deletion of an agent's socket file", the health check never restarted the agent).
import { unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { probe } from "../../orchestrator/core/health.js";
import { AipServer } from "../../protocol/transport/server.js";
import { successResponse } from "../../protocol/contract/envelope.js";
import { tempDir } from "../helpers.js";

/** A hang detector, not a measure: the suite's load on two cores must never reach it. */
const PROBE_LIMIT_MS = 20_000;

let server: AipServer | undefined;
let t: ReturnType<typeof tempDir> | undefined;
afterEach(async () => {
  await server?.close(100);
  t?.cleanup();
});

it("a probe after the agent's socket file is deleted fails, even right after a successful one", async () => {
  t = tempDir();
  server = await AipServer.listen({
    socketPath: join(t.dir, "agent.sock"),
    invoke: async () => successResponse({}, "x"),
    routes: { "GET /healthz": async () => ({ status: 200, body: '{"status":"ok"}' }) },
  });
  expect((await probe(server.socketPath, PROBE_LIMIT_MS)).ok).toBe(true);
  unlinkSync(server.socketPath);
  const after = await probe(server.socketPath, PROBE_LIMIT_MS);
  expect(after.ok).toBe(false);
  expect(after.error).toContain("ENOENT");
});
