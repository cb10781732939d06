#!/usr/bin/env node
/**
 * `npm run bench [-- --quick] [--only a,b] [--socket PATH] [--out DIR]`: run the scenarios, write
 * bench/results/<date>-<scenario>.json and <date>-report.md.
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { cleanupAll, ROOT } from "./lib/procs.js";
import { machine, writeReport, writeScenario } from "./lib/report.js";
import { SCENARIOS } from "./scenarios/index.js";

const USAGE = `Usage: npm run bench -- [--quick] [--only NAME[,NAME]] [--socket PATH] [--out DIR] [--dry-run]

  --quick        short durations and fewer rounds (a smoke run, figures indicative only)
  --only NAMES   run only these scenarios: ${SCENARIOS.map((s) => s.name).join(", ")}
  --socket PATH  also send the overhead and pooling load to this socket (another proxy in front of agent-dummy)
  --out DIR      where results go (default bench/results)
  --dry-run      print the scenarios that would run, and run none`;

function parse(argv: string[]): {
  quick: boolean;
  only: string[] | undefined;
  socket: string | undefined;
  out: string;
  dryRun: boolean;
} {
  const opts = {
    quick: false,
    dryRun: false,
    only: undefined as string[] | undefined,
    socket: undefined as string | undefined,
    out: join(ROOT, "bench/results"),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (!v) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--quick") opts.quick = true;
    else if (a === "--only") opts.only = value().split(",");
    else if (a === "--socket") opts.socket = value();
    else if (a === "--out") opts.out = value();
    else if (a === "--dry-run") opts.dryRun = true;
    else if (a === "--help" || a === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown argument ${JSON.stringify(a)}`);
  }
  const unknown = opts.only?.filter((n) => !SCENARIOS.some((s) => s.name === n)) ?? [];
  if (unknown.length > 0)
    throw new Error(`unknown scenario ${unknown.join(", ")}; scenarios: ${SCENARIOS.map((s) => s.name).join(", ")}`);
  return opts;
}

async function main(): Promise<number> {
  let opts;
  try {
    opts = parse(process.argv.slice(2));
  } catch (err) {
    console.error(`bench: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const date = new Date().toISOString().slice(0, 10);
  const chosen = SCENARIOS.filter((s) => !opts.only || opts.only.includes(s.name));
  if (opts.dryRun) {
    for (const s of chosen) console.log(`${s.name}\t${s.title}`);
    return 0;
  }
  const t0 = performance.now();
  for (const [i, s] of chosen.entries()) {
    console.error(`bench: [${i + 1}/${chosen.length}] ${s.name}: ${s.title}`);
    const body = await s.load();
    const started = new Date().toISOString();
    const t = performance.now();
    const out = await body.run({ quick: opts.quick, socket: opts.socket, progress: (m) => console.error(`  ${m}`) });
    const seconds = Math.round((performance.now() - t) / 100) / 10;
    const file = writeScenario(opts.out, {
      scenario: s.name,
      title: s.title,
      date,
      started_at: started,
      seconds,
      quick: opts.quick,
      machine: machine(),
      ...out,
    });
    console.error(`bench: ${s.name} done in ${seconds} s → ${file}`);
  }
  const report = writeReport(
    opts.out,
    date,
    SCENARIOS.map((s) => s.name),
  );
  console.error(`bench: report → ${report} (${Math.round((performance.now() - t0) / 1000)} s in all)`);
  return 0;
}

const stop = (): void => {
  cleanupAll();
  process.exit(130);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
try {
  process.exitCode = await main();
} finally {
  cleanupAll();
}
