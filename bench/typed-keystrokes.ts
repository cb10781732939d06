/**
 * `node dist/bench/typed-keystrokes.js [OTHER_DIST]`: the typed-completion scenario's keystrokes
 * (bench/scenarios/typed-completion.ts) through the typed engine in process, without the socket and
 * the worker: per keystroke, whether the checker's program was rebuilt (a collection) or the last
 * answer reused, and the time. With OTHER_DIST (another build's dist/, e.g. of the previous commit),
 * both engines type the same keystrokes alternately on their own service, so load hits both alike;
 * the figures to compare are the ratios.
 */
import { realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { percentile } from "../protocol/percentile.js";
import { benchDir } from "./lib/procs.js";
import { TYPED_LINES, WARMUP_LINE, writeWorkspace } from "./scenarios/typed-completion.js";

interface Engine {
  name: string;
  svc: { loaded: Promise<void>; dispose(): void };
  complete: (text: string, offset: number) => { reused?: boolean };
  ms: number[];
  collections: number;
}

async function engine(name: string, dist: string, root: string): Promise<Engine> {
  const { WorkspaceService } = (await import(join(dist, "agents/lib/code/service.js"))) as {
    WorkspaceService: new (root: string) => Engine["svc"];
  };
  const { typedCompletions } = (await import(join(dist, "agents/lib/completion/typed.js"))) as {
    typedCompletions: (svc: unknown, path: string, text: string, offset: number, limit: number) => { reused?: boolean };
  };
  const svc = new WorkspaceService(root);
  await svc.loaded;
  const path = join(root, "src/big.ts");
  return { name, svc, complete: (t, o) => typedCompletions(svc, path, t, o, 20), ms: [], collections: 0 };
}

const here = resolve(new URL("..", import.meta.url).pathname);
const root = join(benchDir(), "ws");
const big = writeWorkspace(root);
const real = realpathSync(root);
const engines = [await engine("this build", here, real)];
if (process.argv[2]) engines.push(await engine(process.argv[2], resolve(process.argv[2]), real));
const cursor = big.indexOf("  // the cursor types here");
for (const [lines, measured] of [
  [[WARMUP_LINE], false],
  [TYPED_LINES, true],
] as const) {
  let text = big;
  let at = cursor;
  for (const l of lines)
    for (const ch of `${l}\n`) {
      text = text.slice(0, at) + ch + text.slice(at);
      at++;
      for (const e of engines) {
        const t0 = performance.now();
        const r = e.complete(text, at);
        if (!measured) continue;
        e.ms.push(performance.now() - t0);
        if (!r.reused) e.collections++;
      }
    }
}
const out = engines.map((e) => {
  const sorted = [...e.ms].sort((a, b) => a - b);
  return {
    engine: e.name,
    keystrokes: e.ms.length,
    collections: e.collections,
    p50_ms: Math.round(percentile(sorted, 50) * 10) / 10,
    p95_ms: Math.round(percentile(sorted, 95) * 10) / 10,
    total_ms: Math.round(e.ms.reduce((a, b) => a + b, 0)),
  };
});
for (const e of engines) e.svc.dispose();
console.log(JSON.stringify(out, null, 2));
