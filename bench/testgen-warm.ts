#!/usr/bin/env node
/**
 * testgen with the warm runner against the cold one, side by side (docs/agents.md, "testgen"):
 * `node dist/bench/testgen-warm.js --root DIR --file src/x.ts --functions a,b,c [--rounds N]`. The
 * workspace must have vitest installed; it is trusted for the run. Each round asks for every function
 * the cold way (AIP_TESTGEN_WARM=0: a fresh runner per file) and then the warm way (one runner kept),
 * the first warm call of the first round being the runner's start (reported apart). `--modes warm` runs
 * only the warm way. Reported per mode: each request's wall time, the CPU time it cost (this process,
 * the runner and every other process it started, read from /proc; and this process's alone), and the
 * median of each stage of the answer's timings_ms, with the load average over the run, since wall
 * time on a shared host follows its load: modes (and checkouts) are compared in one run, under the
 * same load. `answers` counts what the answers held (observed cases, value assertions, the checks).
 * Writes bench/results/<date>-testgen-warm.json, or `--out NAME` (bench/results/NAME.json).
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "../tools/aip/command.js";
import { percentileOf } from "../protocol/util/percentile.js";
import { standaloneContext } from "../agents/lib/runtime/context.js";
import { createTestgen } from "../agents/testgen/handler.js";
import { stopWarmRunners, warmStarts } from "../agents/testgen/warm.js";
import { createLogger } from "../protocol/util/log.js";
import { treeCpuMs } from "../protocol/util/process-tree.js";
import type { AipRequest } from "../protocol/contract/schemas.js";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "../..");
const args = parseArgs(process.argv.slice(2), ["root", "file", "functions", "rounds", "modes", "out"]);
const root = resolve(String(args.flags.root));
const file = String(args.flags.file);
const functions = String(args.flags.functions).split(",");
const rounds = typeof args.flags.rounds === "string" ? Number(args.flags.rounds) : 2;
const modes = (typeof args.flags.modes === "string" ? args.flags.modes : "cold,warm")
  .split(",")
  .filter((m): m is "cold" | "warm" => m === "cold" || m === "warm");
const silent = createLogger({ agentName: "bench", destination: false });

process.env.AIP_TRUSTED_WORKSPACES = root;
const testgen = createTestgen();
const samples: Record<"cold" | "warm", number[]> = { cold: [], warm: [] };
const cpu: Record<"cold" | "warm", number[]> = { cold: [], warm: [] };
const agentCpu: Record<"cold" | "warm", number[]> = { cold: [], warm: [] };
const stages: Record<"cold" | "warm", Record<string, number[]>> = { cold: {}, warm: {} };
const load: number[] = [];
let firstWarm: number | undefined;
const done = new Map<string, number>();
interface Answer {
  tests: { observed: number; value_assertions: number };
  checks: { typecheck: string; run: string };
}

async function one(
  fn: string,
): Promise<{ ms: number; cpuMs: number; agentCpuMs: number; timings: Record<string, number> }> {
  const ctx = standaloneContext({ traceId: "bench", budgetMs: 120_000, log: silent });
  const c0 = treeCpuMs(process.pid);
  const a0 = process.cpuUsage();
  const t0 = performance.now();
  const answer = (await testgen(
    {
      action: "testgen",
      context: { workspace_root: root, file_path: file },
      constraints: { function: fn, framework: "vitest", run_timeout_ms: 60_000 },
    } as AipRequest,
    ctx,
  )) as Answer;
  const ms = performance.now() - t0;
  // What was done, so that a faster answer that did less shows.
  const key = `${fn}: ${answer.tests.observed} observed, ${answer.tests.value_assertions} value assertions, typecheck ${answer.checks.typecheck}, run ${answer.checks.run}`;
  done.set(key, (done.get(key) ?? 0) + 1);
  const a = process.cpuUsage(a0);
  return {
    ms,
    cpuMs: treeCpuMs(process.pid) - c0,
    agentCpuMs: (a.user + a.system) / 1000,
    timings: ctx.timer.toJSON(),
  };
}

for (let r = 0; r < rounds; r++) {
  for (const mode of modes) {
    if (mode === "cold") process.env.AIP_TESTGEN_WARM = "0";
    else delete process.env.AIP_TESTGEN_WARM;
    for (const fn of functions) {
      load.push(loadavg()[0]!);
      const { ms, cpuMs, agentCpuMs, timings } = await one(fn);
      if (mode === "warm" && firstWarm === undefined) firstWarm = ms;
      else {
        samples[mode].push(ms);
        cpu[mode].push(cpuMs);
        agentCpu[mode].push(agentCpuMs);
        for (const [stage, t] of Object.entries(timings)) (stages[mode][stage] ??= []).push(t);
      }
    }
  }
}

const summary = (xs: number[]): { p50: number; p95: number; n: number } => ({
  p50: Math.round(percentileOf(xs, 50)),
  p95: Math.round(percentileOf(xs, 95)),
  n: xs.length,
});
const result = {
  command: `node dist/bench/testgen-warm.js ${process.argv.slice(2).join(" ")}`,
  measured_at: new Date().toISOString(),
  host: `${cpus().length} cores, load average ${Math.min(...load).toFixed(1)}-${Math.max(...load).toFixed(1)} during the run`,
  runner_starts_warm: warmStarts(),
  answers: Object.fromEntries(done),
  wall_ms: { cold: summary(samples.cold), warm: summary(samples.warm), warm_first: Math.round(firstWarm ?? 0) },
  cpu_ms: { cold: summary(cpu.cold), warm: summary(cpu.warm) },
  agent_cpu_ms: { cold: summary(agentCpu.cold), warm: summary(agentCpu.warm) },
  stage_p50_ms: Object.fromEntries(
    modes.map((m) => [
      m,
      Object.fromEntries(Object.entries(stages[m]).map(([k, xs]) => [k, Math.round(percentileOf(xs, 50))])),
    ]),
  ),
};
console.log(JSON.stringify(result, null, 2));
writeFileSync(
  join(
    ROOT,
    "bench/results",
    typeof args.flags.out === "string"
      ? `${args.flags.out.replace(/[^\w.-]/g, "")}.json`
      : `${new Date().toISOString().slice(0, 10)}-testgen-warm.json`,
  ),
  `${JSON.stringify(result, null, 2)}\n`,
);
stopWarmRunners();
process.exit(0);
