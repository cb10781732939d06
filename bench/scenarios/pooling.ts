/** Scenario 2: adaptive pool vs a fixed pool of 10 vs a new connection per request, under bursts, agent latency 5-60 ms. */
import { httpKeepAlive } from "../lib/clients.js";
import { bursts } from "../lib/loadgen.js";
import { benchDir, startDummy, startPoolOrchestrator, type Proc } from "../lib/procs.js";
import { echoBody, interleave, ratio, table, type Compared, type Scenario } from "../lib/scenario.js";

const CONCURRENCY = [100, 200];
const POOLS = ["adaptive", "fixed-10", "fresh"];
const GAP_MS = 250;

/** agent-dummy waits `delay_ms`: uniform 5-60 ms per request. */
const variedBody = (): string => echoBody(5 + Math.floor(Math.random() * 56));

export const pooling: Scenario = {
  name: "pooling",
  title: "Pooling: adaptive vs fixed pool of 10 vs a new connection per request",
  async run(ctx) {
    const rounds = ctx.quick ? 2 : 3;
    const durationMs = ctx.quick ? 1000 : 4000;
    const dir = benchDir();
    const agent = await startDummy(dir);
    const orchestrators: Proc[] = [];
    try {
      for (const p of POOLS) orchestrators.push(await startPoolOrchestrator(dir, p, agent.socket));
      const targets: Record<string, string> = Object.fromEntries(POOLS.map((p, i) => [p, orchestrators[i]!.socket]));
      if (ctx.socket) targets.other = ctx.socket;
      const results: Record<number, Compared> = {};
      const rows: (string | number | null)[][] = [];
      for (const c of CONCURRENCY) {
        const contenders = Object.entries(targets).map(([name, socket]) => ({
          name,
          measure: async () => {
            // Clients keep their own connections to the orchestrator; what differs is the orchestrator's pool to the agent.
            const client = httpKeepAlive(socket, c);
            try {
              return await bursts(client, c, GAP_MS, durationMs, variedBody);
            } finally {
              await client.close();
            }
          },
        }));
        const cmp = await interleave(`[pooling] bursts of ${c}`, contenders, rounds, ctx.progress);
        results[c] = cmp;
        const a = cmp.median.adaptive!;
        for (const name of Object.keys(targets)) {
          const m = cmp.median[name]!;
          rows.push([c, name, m.p50_ms, m.p95_ms, m.p99_ms, ratio(m.p95_ms, a.p95_ms), m.errors]);
        }
      }
      const markdown = [
        `Bursts: all clients send at once, wait for every answer, pause ${GAP_MS} ms, again; agent-dummy takes 5-60 ms (uniform) per request. Clients reach the orchestrator over keep-alive HTTP; the orchestrator reaches the one shared agent-dummy (max_concurrent 256) through an adaptive pool, a fixed pool of 10, or a new connection per call (no pool limit). ${rounds} interleaved rounds of ${durationMs} ms; medians.`,
        "",
        table(["clients", "pool", "p50 ms", "p95 ms", "p99 ms", "p95 / adaptive p95", "errors"], rows),
      ].join("\n");
      return { parameters: { rounds, duration_ms: durationMs, gap_ms: GAP_MS, concurrency: CONCURRENCY, pools: POOLS, agent_latency_ms: [5, 60] }, results, markdown };
    } finally {
      await Promise.all(orchestrators.map((o) => o.stop()));
      await agent.stop();
    }
  },
};
