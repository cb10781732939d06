#!/usr/bin/env node
/**
 * `node dist/bench/hop-logic.js [REQUESTS]`: the orchestrator's own CPU µs per request, without sockets:
 * `Orchestrator.handle` (validation, routing, the pool, latest wins, the deadline, the answer's check,
 * metrics, the log line to a file) with a transport that answers at once, plus decoding the request and
 * encoding the answer as the front door does. Three rounds of REQUESTS (default 100,000). What the
 * sockets cost on top is the proxy scenario's business (docs/performance.md, "The orchestrator hop").
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../orchestrator/core/config.js";
import { Orchestrator } from "../orchestrator/orchestrator.js";
import type { TransportFactory } from "../orchestrator/pool/transport.js";
import { responseJson } from "../protocol/contract/envelope.js";
import { decodeJson } from "../protocol/transport/json.js";
import { DUMMY, ROOT, benchDir, cleanupAll, startProc } from "./lib/procs.js";

const requests = Number(process.argv[2] ?? 100_000);
const dir = benchDir();
// The trivial agent answers the health probes that make the agent available; the calls never reach it.
const agentSocket = join(dir, "trivial.sock");
const agent = await startProc(join(import.meta.dirname, "lib/trivial-agent.js"), [agentSocket], agentSocket);
const config = join(dir, "agency.json");
writeFileSync(
  config,
  JSON.stringify({
    socket: join(dir, "agency.sock"),
    agent_socket_dir: join(dir, "agents"),
    mode: "systemd",
    vetting: "off",
    agents: [{ name: "dummy", command: [DUMMY], manifest: join(ROOT, "manifests/dummy.json"), socket: agentSocket }],
  }),
);
const TRACE = /"trace_id":"([A-Za-z0-9._:-]{1,128})"/;
const transport: TransportFactory = () => ({
  send: (body) =>
    Promise.resolve(
      `{"status":"success","payload":{"received_action":"echo","context_lines":2},"trace_id":"${TRACE.exec(body)![1]}","agent":"dummy","version":"1.0.0","timings_ms":{"accept":0.01,"handler":0.02}}`,
    ),
  close: async () => undefined,
});
const orchestrator = new Orchestrator(loadConfig(config), { logDestination: join(dir, "agency.log"), transport });
try {
  await orchestrator.start();
  for (let i = 0; i < 100 && !orchestrator.agents[0]!.available; i++) await new Promise((r) => setTimeout(r, 50));
  const signal = new AbortController().signal;
  const body = Buffer.from(
    JSON.stringify({ action: "echo", context: { source_code: "hello\nworld" }, constraints: {} }),
  );
  const run = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      const response = await orchestrator.handle(decodeJson(body, 64), signal, 1);
      if (response.status !== "success") throw new Error(JSON.stringify(response));
      responseJson(response);
      // The front door's event loop turns between requests (the log file is written at the end of a turn).
      if (i % 20 === 19) await new Promise((r) => setImmediate(r));
    }
  };
  await run(20_000);
  for (let round = 1; round <= 3; round++) {
    const before = process.cpuUsage();
    await run(requests);
    const used = process.cpuUsage(before);
    console.log(`round ${round}: ${((used.user + used.system) / requests).toFixed(2)} µs CPU per request`);
  }
} finally {
  await orchestrator.stop();
  await agent.stop();
  cleanupAll();
}
