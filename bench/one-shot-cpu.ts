#!/usr/bin/env node
/**
 * CPU time of the answers an agent gives without serving a request: `--manifest` and a one-shot refusal
 * (empty stdin, AIP_ERR_INVALID_JSON), which vetting and the conformance kit run many times per agent.
 * `node dist/bench/one-shot-cpu.js [--runs N] [--baseline DIR] [--tag NAME]`: each code agent of this
 * build, and with --baseline the same agents of another build's dist/ (a checkout of main), run in
 * turn so that both see the same load. The CPU time is the child's user + system time (`reapedCpuMs`). Writes
 * bench/results/<date>-one-shot-cpu[-<tag>].json.
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "../tools/aip/command.js";
import { percentileOf } from "../protocol/util/percentile.js";
import { reapedCpuMs } from "./lib/procs.js";

const ROOT = resolve(import.meta.dirname, "../..");
const AGENTS = ["summarize", "testgen", "complete-lite", "complete", "diagnose", "search"];
const MODES = { manifest: { args: ["--manifest"], stdin: "" }, refusal: { args: [], stdin: "" } };

const args = parseArgs(process.argv.slice(2), ["runs", "baseline", "tag"]);
const runs = Number(args.flags.runs ?? 5);
const builds: Record<string, string> = { this: join(ROOT, "dist") };
if (args.flags.baseline !== undefined) builds.baseline = resolve(String(args.flags.baseline));
const tag = args.flags.tag !== undefined ? `-${String(args.flags.tag)}` : "";

/** CPU time (ms) of one run of `node SCRIPT ARGS` with `stdin`. */
const cpuOf = (script: string, argv: string[], stdin: string): number =>
  reapedCpuMs(["node", script, ...argv], stdin, { ...process.env, AIP_MODEL: "" }).cpuMs;

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
