#!/usr/bin/env node
/**
 * CPU time of the answers an agent gives without serving a request: `--manifest` and a one-shot refusal
 * (empty stdin, AIP_ERR_INVALID_JSON), which vetting and the conformance kit run many times per agent.
 * `node dist/bench/one-shot-cpu.js [--runs N] [--baseline DIR] [--tag NAME]`: each code agent of this
 * build, and with --baseline the same agents of another build's dist/ (a checkout of main), run in
 * turn so that both see the same load. The CPU time is the child's user + system time, read from a
 * wrapping shell's reaped-children counters (/proc, in clock ticks). Writes
 * bench/results/<date>-one-shot-cpu[-<tag>].json.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "../tools/aip/command.js";
import { percentileOf } from "../protocol/util/percentile.js";

const ROOT = resolve(import.meta.dirname, "../..");
const AGENTS = ["summarize", "testgen", "complete-lite", "complete", "diagnose", "search"];
const MODES = { manifest: { args: ["--manifest"], stdin: "" }, refusal: { args: [], stdin: "" } };
const TICK_MS = 10; // USER_HZ is 100 on Linux

const args = parseArgs(process.argv.slice(2), ["runs", "baseline", "tag"]);
const runs = Number(args.flags.runs ?? 5);
const builds: Record<string, string> = { this: join(ROOT, "dist") };
if (args.flags.baseline !== undefined) builds.baseline = resolve(String(args.flags.baseline));
const tag = args.flags.tag !== undefined ? `-${String(args.flags.tag)}` : "";

/** CPU time (ms) of one run of `node SCRIPT ARGS` with `stdin`. */
function cpuOf(script: string, argv: string[], stdin: string): number {
  // The shell reaps node, so its own /proc stat then counts node's time (cutime, cstime).
  const r = spawnSync("sh", ["-c", 'node "$@" >/dev/null 2>&1; cat /proc/$$/stat', "sh", script, ...argv], {
    input: stdin,
    encoding: "utf8",
    env: { ...process.env, AIP_MODEL: "" },
  });
  const f = r.stdout.slice(r.stdout.lastIndexOf(")") + 2).split(" ");
  return (Number(f[13]) + Number(f[14])) * TICK_MS;
}

const median = (xs: number[]): number =>
  percentileOf(
    [...xs].sort((a, b) => a - b),
    50,
  );

const load = [loadavg()[0]];
const samples: Record<string, Record<string, Record<string, number[]>>> = {};
for (let i = 0; i < runs; i++)
  for (const agent of AGENTS)
    for (const [mode, { args: argv, stdin }] of Object.entries(MODES))
      for (const [build, dist] of Object.entries(builds)) {
        const at = ((samples[agent] ??= {})[mode] ??= {});
        (at[build] ??= []).push(cpuOf(join(dist, `agents/${agent}/main.js`), argv, stdin));
      }
load.push(loadavg()[0]);

const rows = AGENTS.map((agent) => {
  const row: Record<string, unknown> = { agent };
  for (const mode of Object.keys(MODES))
    for (const build of Object.keys(builds)) row[`${mode}_${build}_cpu_ms`] = median(samples[agent]![mode]![build]!);
  return row;
});
console.table(rows);
const out = join(ROOT, "bench/results", `${new Date().toISOString().slice(0, 10)}-one-shot-cpu${tag}.json`);
writeFileSync(
  out,
  `${JSON.stringify(
    {
      bench: "one-shot-cpu",
      runs,
      builds,
      host: { cpus: cpus().length, load1_start: load[0], load1_end: load[1] },
      median_cpu_ms: rows,
      samples,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${out}`);
