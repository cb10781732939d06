#!/usr/bin/env node
/**
 * CPU time with and without the V8 code cache for the TypeScript compiler (AIP_CODE_CACHE,
 * agents/lib/runtime/compile-cache.ts), side by side: one-shot requests that parse or complete a
 * TypeScript buffer, and with `--tests FILE,...` whole vitest files (their workers and the agents they
 * start). Each round runs every case with the cache off and on, in alternating order, so that both see
 * the same load; the cache lives in a temp XDG_CACHE_HOME, warmed by one unmeasured run of each case.
 * `node dist/bench/code-cache-cpu.js [--runs N] [--test-runs N] [--tests a.test.ts,b.test.ts] [--tag NAME]`
 * writes bench/results/<date>-code-cache-cpu[-<tag>].json.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "../tools/aip/command.js";
import { percentileOf } from "../protocol/util/percentile.js";
import { DIST, ROOT, reapedCpuMs } from "./lib/procs.js";

const args = parseArgs(process.argv.slice(2), ["runs", "test-runs", "tests", "tag"]);
const runs = Number(args.flags.runs ?? 5);
const testRuns = Number(args.flags["test-runs"] ?? 1);
const tests = args.flags.tests !== undefined ? String(args.flags.tests).split(",") : [];
const tag = args.flags.tag !== undefined ? `-${String(args.flags.tag)}` : "";

/** A TypeScript buffer of the size a code agent usually sees: one of this repository's own modules. */
const SOURCE = readFileSync(join(ROOT, "agents/lib/code/parse.ts"), "utf8");
const lines = SOURCE.split("\n");
const cursorLine = lines.findIndex((l) => l.includes("dialectOf(")) + 1;

interface Case {
  argv: string[];
  stdin: string;
}
const agent = (name: string, request: object): Case => ({
  argv: ["node", join(DIST, `agents/${name}/main.js`)],
  stdin: JSON.stringify({ ...request, constraints: { timeout_ms: 120_000 } }),
});
const cases: Record<string, Case> = {
  "summarize one-shot": agent("summarize", {
    action: "summarize",
    context: { source_code: SOURCE, language: "typescript" },
  }),
  "complete-lite one-shot": agent("complete-lite", {
    action: "complete",
    context: { source_code: SOURCE, cursor: { line: cursorLine, column: 1 } },
  }),
};
for (const file of tests)
  cases[`vitest ${file}`] = { argv: ["node", join(ROOT, "node_modules/vitest/vitest.mjs"), "run", file], stdin: "" };

const cache = mkdtempSync(join(tmpdir(), "aipcc-bench-"));
const env = (on: boolean): NodeJS.ProcessEnv => ({
  ...process.env,
  AIP_MODEL: "",
  XDG_CACHE_HOME: cache,
  AIP_CODE_CACHE: on ? "1" : "0",
});
const median = (xs: number[]): number =>
  percentileOf(
    [...xs].sort((a, b) => a - b),
    50,
  );
const uptime = (): string => execFileSync("uptime", { encoding: "utf8" }).trim();

const host = { cpus: cpus().length, uptime_start: uptime(), load1_start: loadavg()[0], node: process.version };
const samples: Record<string, { off: number[]; on: number[]; failed: number }> = {};
try {
  // A first run of each case with the cache on writes the caches its processes use (unmeasured): a
  // test file's agents may run with other V8 flags (a heap limit) and so have caches of their own.
  for (const c of Object.values(cases)) reapedCpuMs(c.argv, c.stdin, env(true));
  for (const [name, c] of Object.entries(cases)) {
    const n = name.startsWith("vitest ") ? testRuns : runs;
    const s: { off: number[]; on: number[]; failed: number } = { off: [], on: [], failed: 0 };
    samples[name] = s;
    for (let i = 0; i < n; i++)
      for (const on of i % 2 === 0 ? [false, true] : [true, false]) {
        const r = reapedCpuMs(c.argv, c.stdin, env(on));
        if (r.status !== 0) s.failed++;
        s[on ? "on" : "off"].push(r.cpuMs);
      }
  }
} finally {
  rmSync(cache, { recursive: true, force: true });
}
const rows = Object.entries(samples).map(([name, s]) => ({
  case: name,
  runs: s.off.length,
  off_cpu_ms: median(s.off),
  on_cpu_ms: median(s.on),
  on_over_off: Math.round((median(s.on) / median(s.off)) * 1000) / 1000,
  saved_cpu_ms: median(s.off) - median(s.on),
  failed_runs: s.failed,
}));
console.table(rows);
const out = join(ROOT, "bench/results", `${new Date().toISOString().slice(0, 10)}-code-cache-cpu${tag}.json`);
writeFileSync(
  out,
  `${JSON.stringify(
    {
      bench: "code-cache-cpu",
      how: "CPU (user + system) of each process tree, reaped by a wrapping shell; cache off and on alternated per round",
      host: { ...host, uptime_end: uptime(), load1_end: loadavg()[0] },
      median_cpu_ms: rows,
      samples,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${out}`);
