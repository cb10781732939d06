/**
 * `node dist/bench/typed-keystrokes.js [OTHER_DIST]`: the typed-completion scenario's keystrokes
 * (bench/scenarios/typed-completion.ts) through the typed engine in process, without the socket and
 * the worker: per keystroke, whether the checker's program was rebuilt (a collection) or the last
 * answer reused, and the time. With OTHER_DIST (another build's dist/, e.g. of the previous commit),
 * both engines type the same keystrokes alternately on their own service, so load hits both alike;
 * the figures to compare are the ratios, and `answers_differing` counts the keystrokes whose items differ.
 * The engines take turns at typing first (the first pays more: the other's garbage, cold caches).
 */
import { realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { percentile } from "../protocol/util/percentile.js";
import { benchDir } from "./lib/procs.js";
import { TYPED_LINES, WARMUP_LINE, keystrokes, writeWorkspace } from "./scenarios/typed-completion.js";

interface Engine {
  name: string;
  svc: {
    loaded: Promise<void>;
    dispose(): void;
    stats(): { rebuilds?: number; stale_answers?: number };
    /** What the worker does after posting an answer (builds before stale.ts have none). */
    tidy?(): void;
  };
  complete: (text: string, offset: number) => { reused?: boolean; stale?: boolean; items?: unknown[] };
  /** Each measured keystroke's items, to compare the engines' answers. */
  answers: string[];
  ms: number[];
  /** CPU time of each keystroke (this process: user + system), less disturbed by the machine's load than wall time. */
  cpuMs: number[];
  collections: number;
  /** CPU time of the work after each answer (svc.tidy), off the answer's path: the worker does it once the answer is posted. */
  afterMs: number[];
  /** Collections answered by the last program's checker without a rebuild (stale.ts; builds before it have none). */
  stale: number;
}

async function engine(name: string, dist: string, root: string): Promise<Engine> {
  const { WorkspaceService } = (await import(join(dist, "agents/lib/code/service.js"))) as {
    WorkspaceService: new (root: string) => Engine["svc"];
  };
  const { typedCompletions } = (await import(join(dist, "agents/lib/completion/typed.js"))) as {
    typedCompletions: Engine["complete"] extends (...a: never[]) => infer R
      ? (svc: unknown, path: string, text: string, offset: number, limit: number) => R
      : never;
  };
  const svc = new WorkspaceService(root);
  await svc.loaded;
  const path = join(root, "src/big.ts");
  return {
    name,
    svc,
    complete: (t, o) => typedCompletions(svc, path, t, o, 20),
    ms: [],
    cpuMs: [],
    answers: [],
    afterMs: [],
    collections: 0,
    stale: 0,
  };
}

const here = resolve(new URL("..", import.meta.url).pathname);
const root = join(benchDir(), "ws");
const big = writeWorkspace(root);
const real = realpathSync(root);
const engines = [await engine("this build", here, real)];
if (process.argv[2]) engines.push(await engine(process.argv[2], resolve(process.argv[2]), real));
const cursor = big.indexOf("  // the cursor types here");
const rebuildsBefore = new Map<Engine, number | undefined>();
for (const [lines, measured] of [
  [[WARMUP_LINE], false],
  [TYPED_LINES, true],
] as const) {
  if (measured) for (const e of engines) rebuildsBefore.set(e, e.svc.stats().rebuilds);
  for (const { text, at } of keystrokes(big, cursor, lines)) {
    // The engine that types first at a keystroke pays more (the other's garbage, cold caches): they take turns.
    for (const e of at % 2 === 0 ? engines : [...engines].reverse()) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const r = e.complete(text, at);
      if (!measured) {
        e.svc.tidy?.();
        continue;
      }
      e.ms.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      e.cpuMs.push((c.user + c.system) / 1000);
      const a0 = process.cpuUsage();
      e.svc.tidy?.();
      const a = process.cpuUsage(a0);
      e.afterMs.push((a.user + a.system) / 1000);
      e.answers.push(JSON.stringify(r.items));
      if (!r.reused) e.collections++;
      if (r.stale) e.stale++;
    }
  }
}
const out = engines.map((e) => {
  const sorted = [...e.ms].sort((a, b) => a - b);
  const cpu = [...e.cpuMs].sort((a, b) => a - b);
  const before = rebuildsBefore.get(e);
  return {
    engine: e.name,
    keystrokes: e.ms.length,
    collections: e.collections,
    stale_answers: e.stale,
    // A build that does not count its programs rebuilds one per collection (its service syncs on each).
    program_rebuilds: before === undefined ? e.collections : e.svc.stats().rebuilds! - before,
    p50_ms: Math.round(percentile(sorted, 50) * 10) / 10,
    p95_ms: Math.round(percentile(sorted, 95) * 10) / 10,
    max_ms: Math.round((sorted.at(-1) ?? 0) * 10) / 10,
    cpu_p50_ms: Math.round(percentile(cpu, 50) * 10) / 10,
    cpu_p95_ms: Math.round(percentile(cpu, 95) * 10) / 10,
    cpu_max_ms: Math.round((cpu.at(-1) ?? 0) * 10) / 10,
    after_answer_cpu_max_ms: Math.round(Math.max(0, ...e.afterMs) * 10) / 10,
    // Keystrokes whose items differ from the other engine's (with OTHER_DIST).
    ...(engines.length > 1
      ? { answers_differing: e.answers.filter((a, i) => engines.some((o) => o.answers[i] !== a)).length }
      : {}),
    total_ms: Math.round(e.ms.reduce((a, b) => a + b, 0)),
    cpu_total_ms: Math.round(e.cpuMs.reduce((a, b) => a + b, 0)),
  };
});
for (const e of engines) e.svc.dispose();
console.log(JSON.stringify(out, null, 2));
