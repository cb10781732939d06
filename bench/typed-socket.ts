/**
 * `node dist/bench/typed-socket.js RUNS DIST [DIST…]`: the typed-completion scenario's keystrokes
 * (bench/scenarios/typed-completion.ts) over complete-lite's socket, for each build's dist/ in turn,
 * RUNS times: runs interleaved (the builds take turns at going first), each on a fresh workspace and
 * agent, so the machine's load hits every build alike. Per build: the keystroke distribution of each
 * run and of all runs pooled (p50, p95, p99, max), the first request, the share answered by each
 * engine, and the load average at each run's start; with two builds, the keystrokes where both
 * answered from the checker with different items (`typed_answers_differing`: 0 when the answers are
 * identical wherever the checker answered in both).
 */
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { percentile } from "../protocol/util/percentile.js";
import { benchDir, cleanupAll, startProc } from "./lib/procs.js";
import { TYPED_LINES, WARMUP_LINE, completeAsker, typeLines, writeWorkspace } from "./scenarios/typed-completion.js";

interface Key {
  key: string;
  ms: number;
  engine: string;
  items: string;
  /** The agent's stage times (timings_ms): where a slow keystroke's time went. */
  stages: string;
}

interface Run {
  load: number;
  first_ms: number;
  keys: Key[];
}

async function run(dist: string): Promise<Run> {
  const load = loadavg()[0]!;
  const dir = benchDir();
  const root = join(dir, "ws");
  const big = writeWorkspace(root);
  const socket = join(dir, "lite.sock");
  const agent = await startProc(join(dist, "agents/complete-lite/main.js"), ["--listen", socket], socket);
  try {
    const ask = completeAsker(socket, root);
    const cursor = big.indexOf("  // the cursor types here");
    const first = await ask(big, cursor);
    await ask(big, cursor, { timeout_ms: 120_000, typed_wait_ms: 60_000 });
    const type = async (lines: readonly string[]): Promise<Key[]> =>
      (await typeLines(big, cursor, lines, ask)).map((k) => ({
        key: k.key,
        ms: k.ms,
        engine: k.engine,
        items: JSON.stringify(k.items),
        stages: JSON.stringify(k.stages),
      }));
    await type([WARMUP_LINE]);
    return { load, first_ms: first.ms, keys: await type(TYPED_LINES) };
  } finally {
    await agent.stop();
  }
}

const r1 = (n: number): number => Math.round(n * 10) / 10;

function distribution(ms: number[]): { p50: number; p95: number; p99: number; max: number } {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: r1(percentile(s, 50)), p95: r1(percentile(s, 95)), p99: r1(percentile(s, 99)), max: r1(s.at(-1) ?? 0) };
}

const [runsArg, ...dists] = process.argv.slice(2);
const runs = Number(runsArg);
if (!Number.isInteger(runs) || runs < 1 || dists.length === 0) {
  console.error("usage: typed-socket RUNS DIST [DIST…]");
  process.exit(2);
}
const builds = dists.map((d) => ({ dist: resolve(d), runs: [] as Run[] }));
try {
  for (let i = 0; i < runs; i++) {
    const order = i % 2 === 0 ? builds : [...builds].reverse();
    for (const b of order) {
      const r = await run(b.dist);
      b.runs.push(r);
      const d = distribution(r.keys.map((k) => k.ms));
      console.error(`run ${i + 1} ${b.dist}: load ${r.load.toFixed(1)}, p95 ${d.p95} ms, max ${d.max} ms`);
    }
  }
} finally {
  cleanupAll();
}
const out = builds.map((b) => {
  const all = b.runs.flatMap((r) => r.keys);
  const slowest = [...all].sort((a, c) => c.ms - a.ms).slice(0, 15);
  return {
    dist: b.dist,
    runs: b.runs.map((r) => ({
      load_average: r1(r.load),
      first_request_ms: Math.round(r.first_ms),
      ...distribution(r.keys.map((k) => k.ms)),
      syntactic: r.keys.filter((k) => k.engine === "syntactic").length,
    })),
    pooled: distribution(all.map((k) => k.ms)),
    p95_per_run: b.runs.map((r) => distribution(r.keys.map((k) => k.ms)).p95).sort((a, c) => a - c),
    runs_p95_at_or_under_25: b.runs.filter((r) => distribution(r.keys.map((k) => k.ms)).p95 <= 25).length,
    engines: Object.fromEntries(
      [...new Set(all.map((k) => k.engine))].map((e) => [e, all.filter((k) => k.engine === e).length]),
    ),
    slowest: slowest.map((k) => `${k.key} | ${k.engine} ${k.ms.toFixed(1)} ${k.stages}`),
  };
});
let differing: number | undefined;
if (builds.length === 2) {
  differing = 0;
  const [a, b] = builds as [(typeof builds)[0], (typeof builds)[0]];
  for (let i = 0; i < runs; i++)
    a.runs[i]!.keys.forEach((k, j) => {
      const o = b.runs[i]!.keys[j]!;
      if (k.engine === "typed" && o.engine === "typed" && k.items !== o.items) differing!++;
    });
}
console.log(
  JSON.stringify({ builds: out, ...(differing !== undefined ? { typed_answers_differing: differing } : {}) }, null, 2),
);
