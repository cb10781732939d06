#!/usr/bin/env node
/**
 * Python completion keystroke by keystroke (docs/agents.md, "Python completion"):
 * - a new generated workspace of 200 Python modules: the first request's time and engine (pyright has
 *   not loaded; the syntactic engine answers within the deadline);
 * - a 2,000-line module of it: statements typed character by character at spread positions, each
 *   keystroke a complete request with the whole buffer, through complete-lite's handler with pyright
 *   behind it at the default budgets, and once more with the syntactic engine alone; p50/p95 after
 *   the warm-up keystrokes.
 * `node dist/bench/python-keystrokes.js`; writes bench/results/<date>-python-keystrokes.json.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createCompleteLite } from "../agents/lib/completion/handler.js";
import { PyrightEngine } from "../agents/lib/completion/python/pyright.js";
import { standaloneContext } from "../agents/lib/runtime/context.js";
import { createLogger } from "../protocol/util/log.js";
import type { AipRequest } from "../protocol/contract/schemas.js";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "../..");
const silent = createLogger({ agentName: "bench", destination: false });
const FILES = 200;
const WARMUP = 20;

/** A module of `classes` classes, each with an __init__ and `methods` methods (about 2,000 lines for 40 × 6). */
function module(i: number, classes: number, methods: number): string {
  const out = [`"""Generated module ${i}."""`, "import os", "from typing import Any", "", `LIMIT_${i} = ${i}`, ""];
  for (let c = 0; c < classes; c++) {
    const base = c > 0 ? `Shape${i}_${c - 1}` : "object";
    out.push("", `class Shape${i}_${c}(${base}):`, `    """Shape ${c}."""`, "");
    out.push(`    def __init__(self, radius_${c}: float, name: str = "s") -> None:`);
    out.push(
      `        self.radius_${c} = radius_${c}`,
      `        self.name_${c} = name`,
      `        self.items_${c}: list[Any] = []`,
      "",
    );
    for (let m = 0; m < methods; m++) {
      out.push(`    def method_${m}(self, factor: float) -> float:`);
      out.push(`        total = self.radius_${c} * factor`);
      out.push(`        for item in self.items_${c}:`, `            total += len(str(item))`);
      out.push(`        path = os.path.join(self.name_${c}, str(total))`);
      out.push(`        return total + len(path) + LIMIT_${i}`, "");
    }
  }
  return `${out.join("\n")}\n`;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0) * 100) / 100;
}

async function main(): Promise<void> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "aip-pykeys-")));
  process.env.AIP_WORKSPACE_ROOTS = [process.env.AIP_WORKSPACE_ROOTS, dir].filter(Boolean).join(":");
  mkdirSync(join(dir, "pkg"));
  writeFileSync(join(dir, "pkg/__init__.py"), "");
  for (let i = 1; i < FILES; i++) writeFileSync(join(dir, `pkg/mod${i}.py`), module(i, 4, 3));
  const big = module(0, 40, 6);
  writeFileSync(join(dir, "pkg/big.py"), big);
  const lines = big.split("\n").length;
  const pyright = new PyrightEngine();
  const typed = createCompleteLite(undefined, undefined, pyright);
  const syntactic = createCompleteLite();
  const ask = async (
    h: typeof typed,
    source: string,
  ): Promise<{ ms: number; cpuMs: number; engine: string; items: number }> => {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const r = (await h(
      {
        action: "complete",
        context: { source_code: source, file_path: "pkg/big.py", workspace_root: dir },
        constraints: { max_items: 50 },
      } as unknown as AipRequest,
      standaloneContext({ traceId: "bench", budgetMs: 1500, log: silent }),
    ).catch((err: Error & { code?: string }) => ({ engine: `error ${err.code ?? err.message}`, items: [] }))) as {
      engine: string;
      items: unknown[];
    };
    const c = process.cpuUsage(c0);
    return { ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000, engine: r.engine, items: r.items.length };
  };
  const loadBefore = loadavg();
  // The first request on the new workspace: the checker has not loaded.
  const first = await ask(typed, big);
  // Keystrokes: a statement typed inside method bodies spread over the file.
  const text = "        value = self.radius_1 + total";
  const anchors: number[] = [];
  for (
    let at = big.indexOf("        return total");
    at >= 0 && anchors.length < 12;
    at = big.indexOf("        return total", at + 1)
  )
    if (anchors.length === 0 || at - anchors.at(-1)! > big.length / 14) anchors.push(at);
  const run = async (h: typeof typed) => {
    const ms: number[] = [];
    const cpu: number[] = [];
    const engines: Record<string, number> = {};
    for (const at of anchors) {
      for (let k = 1; k <= text.length; k++) {
        const buffer = `${big.slice(0, at)}${text.slice(0, k)}\n${big.slice(at)}`;
        const r = await ask(h, buffer.slice(0, at + k) + buffer.slice(at + k));
        ms.push(r.ms);
        cpu.push(r.cpuMs);
        engines[r.engine] = (engines[r.engine] ?? 0) + 1;
      }
    }
    const warm = ms.slice(WARMUP);
    const warmCpu = cpu.slice(WARMUP);
    return {
      keystrokes: ms.length,
      warmup: WARMUP,
      p50_ms: pct(warm, 0.5),
      p95_ms: pct(warm, 0.95),
      max_ms: pct(warm, 1),
      // This process's CPU time per keystroke (the checker's child not included): what a keystroke
      // costs without the wait for a core, which a loaded machine adds to the wall time above.
      cpu_p50_ms: pct(warmCpu, 0.5),
      cpu_p95_ms: pct(warmCpu, 0.95),
      engines,
    };
  };
  const withChecker = await run(typed);
  const alone = await run(syntactic);
  const health = pyright.health();
  pyright.close();
  rmSync(dir, { recursive: true, force: true });
  const results = {
    date: new Date().toISOString(),
    command: "node dist/bench/python-keystrokes.js",
    // The machine's 1/5/15-minute load averages before and after (its cores: os.availableParallelism()).
    load_average: {
      before: loadBefore.map((x) => Math.round(x * 10) / 10),
      after: loadavg().map((x) => Math.round(x * 10) / 10),
    },
    workspace: { files: FILES, big_file_lines: lines },
    cores: availableParallelism(),
    first_request: {
      ms: Math.round(first.ms),
      cpu_ms: Math.round(first.cpuMs),
      engine: first.engine,
      items: first.items,
      target_ms: 1500,
    },
    keystrokes_with_pyright: withChecker,
    keystrokes_syntactic: alone,
    target_p95_ms: 25,
    pyright: health,
  };
  console.log(JSON.stringify(results, null, 2));
  writeFileSync(
    join(ROOT, "bench/results", `${new Date().toISOString().slice(0, 10)}-python-keystrokes.json`),
    `${JSON.stringify(results, null, 2)}\n`,
  );
}

await main();
