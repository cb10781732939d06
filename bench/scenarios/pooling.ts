/**
 * Scenario 2: adaptive pool vs a fixed pool of 10 vs a new connection per request, under bursts, agent
 * latency 5-60 ms; then 200 steady clients of the plain echo, adaptive vs a fixed pool of the agent's
 * max_concurrent (the adaptive pool must reach >= 0.9x its throughput).
 */
import { httpKeepAlive } from "../lib/clients.js";
import { bursts, closedLoop } from "../lib/loadgen.js";
import { benchDir, startDummy, startPoolOrchestrator, type Proc } from "../lib/procs.js";
import { echoBody, interleave, ratio, table, type Compared, type ScenarioBody } from "../lib/scenario.js";
import { envString } from "../../protocol/util/env.js";

const CONCURRENCY = [100, 200];
const POOLS = ["adaptive", "fixed-10", "fresh"];
const GAP_MS = 250;
/** agent-dummy's max_concurrent (manifests/dummy.json): the fixed pool the steady load compares against. */
const DUMMY_MAX_CONCURRENT = 256;
const STEADY_CLIENTS = 200;
const STEADY_POOLS = ["adaptive", `fixed-${DUMMY_MAX_CONCURRENT}`];
/** The steady comparison's rounds (each pool once per round) and their length. */
const STEADY_ROUNDS = 10;
const STEADY_ROUND_MS = 2000;

/** agent-dummy waits `delay_ms`: uniform 5-60 ms per request. */
const variedBody = (): string => echoBody(5 + Math.floor(Math.random() * 56));

export const pooling: ScenarioBody = {
  async run(ctx) {
    const rounds = ctx.quick ? 2 : 3;
    const durationMs = ctx.quick ? 1000 : 4000;
    const dir = benchDir();
    const agent = await startDummy(dir);
    // AIP_BENCH_BASELINE=DIST: another build's dist/ (its agent-dummy and bench orchestrator) in the steady
    // comparison, interleaved, as "baseline adaptive" and "baseline fixed-256".
    const baselineDist = envString("AIP_BENCH_BASELINE");
    const baselineAgent = baselineDist ? await startDummy(dir, "dummy-baseline", baselineDist) : undefined;
    const orchestrators: Proc[] = [];
    try {
      for (const p of new Set([...POOLS, ...STEADY_POOLS]))
        orchestrators.push(await startPoolOrchestrator(dir, p, agent.socket));
      const all: Record<string, string> = Object.fromEntries(
        [...new Set([...POOLS, ...STEADY_POOLS])].map((p, i) => [p, orchestrators[i]!.socket]),
      );
      const steadyPools = [...STEADY_POOLS];
      if (baselineDist && baselineAgent)
        for (const p of STEADY_POOLS) {
          const o = await startPoolOrchestrator(dir, p, baselineAgent.socket, baselineDist, `baseline-${p}`);
          orchestrators.push(o);
          all[`baseline ${p}`] = o.socket;
          steadyPools.push(`baseline ${p}`);
        }
      const targets: Record<string, string> = Object.fromEntries(POOLS.map((p) => [p, all[p]!]));
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
      // Steady: every client sends its next request as soon as the previous one is answered; plain echo.
      // Many short rounds in alternating order (A B B A …), each pair's ratio taken side by side: the
      // machine's load drifts by more than the difference measured, so one long round proves nothing.
      const steadyRounds = ctx.quick ? 4 : STEADY_ROUNDS;
      const steadyMs = ctx.quick ? 1000 : STEADY_ROUND_MS;
      const steady = await interleave(
        `[pooling] steady ${STEADY_CLIENTS}`,
        steadyPools.map((name) => ({
          name,
          measure: async () => {
            const client = httpKeepAlive(all[name]!, STEADY_CLIENTS);
            try {
              return await closedLoop(client, STEADY_CLIENTS, steadyMs, () => echoBody());
            } finally {
              await client.close();
            }
          },
        })),
        steadyRounds,
        ctx.progress,
        true,
      );
      const fixedName = `fixed-${DUMMY_MAX_CONCURRENT}`;
      const fixedSteady = steady.median[fixedName]!;
      const sum = (name: string): number => steady.rounds[name]!.reduce((n, r) => n + r.count, 0);
      /** Adaptive against fixed per round (each pair side by side), for one build ("" or "baseline "). */
      const verdict = (prefix: string) => {
        const perRound = steady.rounds[`${prefix}adaptive`]!.map((a, i) =>
          ratio(a.rps, steady.rounds[`${prefix}${fixedName}`]![i]!.rps),
        );
        const known = perRound.filter((r): r is number => r !== null).sort((x, y) => x - y);
        return {
          per_round_ratio: perRound,
          median_ratio: known.length ? known[Math.floor((known.length - 1) / 2)]! : null,
          min_ratio: known[0] ?? null,
          max_ratio: known[known.length - 1] ?? null,
          rounds_at_least_0_9: known.filter((r) => r >= 0.9).length,
          rounds: known.length,
          /** All adaptive requests answered over all fixed ones (the rounds have the same length). */
          total_ratio: ratio(sum(`${prefix}adaptive`), sum(`${prefix}${fixedName}`)),
        };
      };
      const steadyVerdict = verdict("");
      const baselineVerdict = baselineDist ? verdict("baseline ") : undefined;
      const perRound = steadyVerdict.per_round_ratio;
      const steadyRows = steadyPools.map((name) => {
        const m = steady.median[name]!;
        const fixed = name.startsWith("baseline ") ? steady.median[`baseline ${fixedName}`]! : fixedSteady;
        return [STEADY_CLIENTS, name, m.rps, ratio(m.rps, fixed.rps), m.p50_ms, m.p95_ms, m.p99_ms, m.errors];
      });
      const markdown = [
        `Bursts: all clients send at once, wait for every answer, pause ${GAP_MS} ms, again; agent-dummy takes 5-60 ms (uniform) per request. Clients reach the orchestrator over keep-alive HTTP; the orchestrator reaches the one shared agent-dummy (max_concurrent 256) through an adaptive pool, a fixed pool of 10, or a new connection per call (no pool limit). ${rounds} interleaved rounds of ${durationMs} ms; medians.`,
        "",
        table(["clients", "pool", "p50 ms", "p95 ms", "p99 ms", "p95 / adaptive p95", "errors"], rows),
        "",
        `Steady: ${STEADY_CLIENTS} closed-loop clients of the plain echo (no delay), adaptive pool vs a fixed pool of agent-dummy's max_concurrent (${DUMMY_MAX_CONCURRENT}), ${steadyRounds} rounds of ${steadyMs} ms in alternating order (A B B A …), medians; target: adaptive req/s >= 0.9x fixed.`,
        "",
        table(["clients", "pool", "req/s", "req/s vs fixed", "p50 ms", "p95 ms", "p99 ms", "errors"], steadyRows),
        "",
        `Per round, adaptive req/s / fixed req/s (each pair measured side by side): ${perRound.join(", ")}; median ${steadyVerdict.median_ratio}, range ${steadyVerdict.min_ratio}-${steadyVerdict.max_ratio}, ${steadyVerdict.rounds_at_least_0_9} of ${steadyVerdict.rounds} rounds >= 0.9; all requests answered, adaptive / fixed: ${steadyVerdict.total_ratio}.`,
        ...(baselineVerdict
          ? [
              "",
              `Baseline build (${baselineDist}), same rounds: adaptive / fixed per round ${baselineVerdict.per_round_ratio.join(", ")}; median ${baselineVerdict.median_ratio}; all requests answered, adaptive / fixed: ${baselineVerdict.total_ratio}.`,
            ]
          : []),
      ].join("\n");
      return {
        parameters: {
          rounds,
          duration_ms: durationMs,
          gap_ms: GAP_MS,
          concurrency: CONCURRENCY,
          pools: POOLS,
          agent_latency_ms: [5, 60],
          steady_clients: STEADY_CLIENTS,
          steady_rounds: steadyRounds,
          steady_round_ms: steadyMs,
          steady_pools: steadyPools,
          ...(baselineDist ? { baseline: baselineDist } : {}),
        },
        results: {
          ...results,
          steady,
          steady_verdict: steadyVerdict,
          ...(baselineVerdict ? { baseline_steady_verdict: baselineVerdict } : {}),
        },
        markdown,
      };
    } finally {
      await Promise.all(orchestrators.map((o) => o.stop()));
      await agent.stop();
      await baselineAgent?.stop();
    }
  },
};
