/** Scenario 1: agent-dummy direct vs through the orchestrator (`aip up`), HTTP keep-alive and NDJSON, at several concurrencies. */
import { join } from "node:path";
import { httpKeepAlive, ndjsonConnections, type Client } from "../lib/clients.js";
import { closedLoop } from "../lib/loadgen.js";
import { benchDir, startAipUp } from "../lib/procs.js";
import {
  echoBody,
  interleave,
  ratio,
  table,
  type Compared,
  type Contender,
  type ScenarioBody,
} from "../lib/scenario.js";

const CONCURRENCY = [1, 12, 100, 200];
const FRAMINGS = ["http", "ndjson"] as const;

function measureWith(make: () => Client, concurrency: number, durationMs: number): Contender["measure"] {
  return async () => {
    const client = make();
    try {
      // Warm-up: open the connections before the clock starts.
      await Promise.all(Array.from({ length: concurrency }, () => client.send(echoBody()).catch(() => false)));
      return await closedLoop(client, concurrency, durationMs, () => echoBody());
    } finally {
      await client.close();
    }
  };
}

export const overhead: ScenarioBody = {
  async run(ctx) {
    const rounds = ctx.quick ? 2 : 3;
    const durationMs = ctx.quick ? 800 : 2500;
    const dir = benchDir();
    const agency = await startAipUp(dir, "overhead");
    const targets: Record<string, string> = {
      direct: join(dir, "overhead-agents/dummy.sock"),
      orchestrator: agency.socket,
    };
    if (ctx.socket) targets.other = ctx.socket;
    const results: Record<string, Record<number, Compared>> = {};
    const rows: (string | number | null)[][] = [];
    try {
      for (const framing of FRAMINGS) {
        results[framing] = {};
        for (const c of CONCURRENCY) {
          const contenders = Object.entries(targets).map(([name, socket]) => ({
            name,
            measure: measureWith(
              () => (framing === "http" ? httpKeepAlive(socket, c) : ndjsonConnections(socket)),
              c,
              durationMs,
            ),
          }));
          const cmp = await interleave(`[overhead] ${framing} c=${c}`, contenders, rounds, ctx.progress);
          results[framing][c] = cmp;
          const d = cmp.median.direct!;
          const o = cmp.median.orchestrator!;
          rows.push([
            framing,
            c,
            d.rps,
            o.rps,
            ratio(o.rps, d.rps),
            `${d.p50_ms} / ${o.p50_ms}`,
            `${d.p95_ms} / ${o.p95_ms}`,
            `${d.p99_ms} / ${o.p99_ms}`,
            ratio(o.p95_ms, d.p95_ms),
          ]);
          if (cmp.median.other)
            rows[rows.length - 1]!.push(`${cmp.median.other.rps} req/s, p95 ${cmp.median.other.p95_ms} ms`);
        }
      }
    } finally {
      await agency.stop();
    }
    const head = [
      "framing",
      "clients",
      "direct req/s",
      "through req/s",
      "through/direct req/s",
      "p50 ms (direct / through)",
      "p95 ms",
      "p99 ms",
      "through/direct p95",
    ];
    if (ctx.socket) head.push(`--socket ${ctx.socket}`);
    const markdown = [
      `Closed loop: each client sends its next request when the previous one is answered; ${rounds} interleaved rounds of ${durationMs} ms per configuration, medians shown. "through" is \`aip up\` (embedded, one agent-dummy, log level info: one JSON line per request to a file); "direct" is the same agent-dummy process's own socket.`,
      "",
      table(head, rows),
    ].join("\n");
    return {
      parameters: { rounds, duration_ms: durationMs, concurrency: CONCURRENCY, framings: FRAMINGS, targets },
      results,
      markdown,
    };
  },
};
