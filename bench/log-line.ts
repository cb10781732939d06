#!/usr/bin/env node
/**
 * `node dist/bench/log-line.js`: CPU µs per request log line (the orchestrator's fields, info level),
 * serialised only (a destination that drops the line) and written to a log file (protocol/util/log.ts
 * LineBatchFile), 20 lines per event-loop turn, three rounds of 100,000 lines each.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, openDestination } from "../protocol/util/log.js";

const fields = {
  event: "request",
  trace_id: "9f9efaf6411cb9c300000000d494548c",
  action: "echo",
  agent: "dummy",
  version: "1.0.0",
  outcome: "success",
  timings_ms: { route: 0.012, queue: 0.003, agent: 0.2, total: 0.25, "agent.accept": 0.01, "agent.handler": 0.02 },
};
const dir = mkdtempSync(join(tmpdir(), "aip-log-bench-"));
try {
  for (const [name, destination] of [
    ["serialise only", { write: (): void => undefined }],
    ["log file", openDestination(join(dir, "aip.log"))],
  ] as const) {
    const log = createLogger({ agentName: "orchestrator", destination });
    for (let round = 1; round <= 3; round++) {
      const n = 100_000;
      const before = process.cpuUsage();
      for (let i = 0; i < n; i++) {
        log.info(fields, "request");
        if (i % 20 === 19) await new Promise((r) => setImmediate(r));
      }
      const used = process.cpuUsage(before);
      console.log(`${name}, round ${round}: ${((used.user + used.system) / n).toFixed(2)} µs CPU per line`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
