/**
 * Python completion against jedi (docs/agents.md, "Python completion"): positions sampled by
 * bench/eval/python_anchor.py from ../shared/corpus/python/ (self. members, other members, plain
 * identifiers; the name removed and the buffer cut at the cursor, an identifier's first character
 * typed), with jedi's answers on the same buffers. complete-lite answers each position through its
 * handler, once with the syntactic engine alone and once with pyright given time to answer (the
 * typed engine once warm); recall@1/@5/@50 per category, side by side with jedi's. On the same
 * positions, three broken buffers (truncated after the cursor, the rest of the line cut, an unclosed
 * bracket before the cursor) measure the share answered with success.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createCompleteLite } from "../../agents/lib/completion/handler.js";
import { memberRecorder, type MemberGroup, type MemberRow } from "../../agents/lib/completion/python/member-ranker.js";
import { memberUse } from "../../agents/lib/completion/python/member-use.js";
import { PyrightEngine } from "../../agents/lib/completion/python/pyright.js";
import { standaloneContext } from "../../agents/lib/runtime/context.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { createLogger } from "../../protocol/util/log.js";

const silent = createLogger({ agentName: "eval", destination: false });

interface Position {
  project: string;
  file: string;
  category: "self_member" | "member" | "identifier";
  name: string;
  prefix: string;
  start: number;
  line: number;
  jedi: string[];
  jedi_ms: number;
}

interface Tally {
  asked: number;
  at1: number;
  at5: number;
  at50: number;
  misses: string[];
}

const tally = (): Tally => ({ asked: 0, at1: 0, at5: 0, at50: 0, misses: [] });
/** EVAL_ALL_MISSES=1: every miss (to compare two rankings), not just the first ten per category. */
const MAX_MISSES = process.env.EVAL_ALL_MISSES === "1" ? Infinity : 10;

function count(t: Tally, rank: number, miss: string): void {
  t.asked++;
  if (rank === 0) t.at1++;
  if (rank >= 0 && rank < 5) t.at5++;
  if (rank >= 0 && rank < 50) t.at50++;
  if ((rank < 0 || rank >= 5) && t.misses.length < MAX_MISSES) t.misses.push(`${miss} rank ${rank}`);
}

function rates(t: Tally): Record<string, unknown> {
  const r = (n: number) => Math.round((1000 * n) / Math.max(1, t.asked)) / 1000;
  return { asked: t.asked, recall_at_1: r(t.at1), recall_at_5: r(t.at5), recall_at_50: r(t.at50) };
}

function req(root: string, file: string, source: string, wait?: number): AipRequest {
  return {
    action: "complete",
    context: { source_code: source, file_path: file, workspace_root: root, language: "python" },
    constraints: { max_items: 50, ...(wait !== undefined ? { typed_wait_ms: wait } : {}) },
  } as unknown as AipRequest;
}

function ctx() {
  return standaloneContext({ traceId: "eval", budgetMs: 60_000, log: silent });
}

/** Break a buffer around the cursor as an editor mid-edit would. */
function broken(text: string, at: number, shape: "truncate" | "cut_line" | "unclosed"): string {
  const lineEnd = text.indexOf("\n", at);
  if (shape === "truncate") return text.slice(0, at);
  if (shape === "cut_line") return text.slice(0, at) + (lineEnd < 0 ? "" : text.slice(lineEnd));
  return `${text.slice(0, at)}(${text.slice(at)}`;
}

/** One member completion's candidates with the name the source has there (for bench/eval/train-python-ranker.ts). */
export interface MemberSample {
  where: string;
  engine: "syntactic" | "typed";
  group: MemberGroup;
  expected: string;
  rows: MemberRow[];
}

export async function evalPythonCompletion(
  corpus: string,
  opts: { perFile: number; python: string; samples?: (s: MemberSample) => void },
) {
  const started = performance.now();
  // The corpus is the workspace the requests name: allowed for this process only.
  process.env.AIP_WORKSPACE_ROOTS = [process.env.AIP_WORKSPACE_ROOTS, corpus].filter(Boolean).join(":");
  // The anchor script is run from the sources (dist/ holds no copy of it).
  const script = join(import.meta.dirname, "../../../bench/eval/python_anchor.py");
  // EVAL_ANCHOR_FILE: a saved anchor run (its JSON) instead of running jedi again, while tuning.
  const saved = process.env.EVAL_ANCHOR_FILE;
  const out = saved
    ? readFileSync(saved, "utf8")
    : execFileSync(opts.python, [script, corpus, String(opts.perFile), "7"], {
        maxBuffer: 256 * 1024 * 1024,
        encoding: "utf8",
      });
  const anchor = JSON.parse(out) as { jedi: string; positions: Position[] };
  const anchorMs = performance.now() - started;
  const texts = new Map<string, string>();
  const text = (p: Position) => {
    const abs = join(corpus, p.project, p.file);
    let t = texts.get(abs);
    if (t === undefined) texts.set(abs, (t = readFileSync(abs, "utf8")));
    return t;
  };
  const syntactic = createCompleteLite();
  const pyright = new PyrightEngine();
  // EVAL_TYPED_CACHE: a file of pyright's answers per position, written on the first run and read on
  // the next (while tuning the ranking: the checker's answers do not change with it).
  const cacheFile = process.env.EVAL_TYPED_CACHE;
  const cached = new Map<string, unknown>(
    cacheFile && existsSync(cacheFile) ? (JSON.parse(readFileSync(cacheFile, "utf8")) as [string, unknown][]) : [],
  );
  const recorded = new Map<string, unknown>();
  const checker = cacheFile
    ? ({
        complete: async (...args: Parameters<PyrightEngine["complete"]>) => {
          const [q] = args;
          const key = `${q.path}:${q.line}:${q.character}:${q.text.length}`;
          const r = cached.get(key) ?? (await pyright.complete(...args));
          recorded.set(key, r);
          return r;
        },
      } as unknown as PyrightEngine)
    : pyright;
  const typed = createCompleteLite(undefined, undefined, checker);
  // EVAL_PYTHON_TYPED=0: the syntactic engine alone (pyright's run over every position takes minutes).
  const withTyped = process.env.EVAL_PYTHON_TYPED !== "0";
  const cats = ["self_member", "member", "identifier"] as const;
  const tallies = {
    jedi: Object.fromEntries(cats.map((c) => [c, tally()])),
    syntactic: Object.fromEntries(cats.map((c) => [c, tally()])),
    typed: Object.fromEntries(cats.map((c) => [c, tally()])),
  } as Record<"jedi" | "syntactic" | "typed", Record<(typeof cats)[number], Tally>>;
  const engines = { typed: 0, syntactic: 0 };
  const brokenTally = { asked: 0, success: 0, with_items: 0, failures: [] as string[] };
  const ms: number[] = [];
  // EVAL_POSITIONS_FILE: every position's ranks and receiver kind, for reading the misses by kind.
  const positions: Record<string, unknown>[] = [];
  for (const p of anchor.positions) {
    const t = text(p);
    const root = join(corpus, p.project);
    const buffer = t.slice(0, p.start) + p.prefix;
    // The workspace's member use as an editor has it after its first seconds: read before the first
    // position of a project (else which positions see it depends on how fast the ones before answer).
    await memberUse.ready(root);
    const where = `${p.project}/${p.file}:${p.line + 1} ${p.name}`;
    const jr = p.jedi.indexOf(p.name);
    count(tallies.jedi[p.category], jr, `${where} (jedi: ${p.jedi.slice(0, 5).join(", ")})`);
    // The candidates of the unbroken buffer's member completions, for training the ranking.
    const sample = (engine: MemberSample["engine"]): void => {
      memberRecorder.record = opts.samples
        ? (group, rows) => opts.samples!({ where, engine, group, expected: p.name, rows })
        : undefined;
    };
    sample("syntactic");
    const t0 = performance.now();
    const s = (await syntactic(req(root, p.file, buffer), ctx())) as { items: { label: string }[] };
    ms.push(performance.now() - t0);
    memberRecorder.record = undefined;
    const sr = s.items.findIndex((i) => i.label === p.name);
    count(
      tallies.syntactic[p.category],
      sr,
      `${where} (got: ${s.items
        .slice(0, 5)
        .map((i) => i.label)
        .join(", ")})`,
    );
    for (const shape of ["truncate", "cut_line", "unclosed"] as const) {
      brokenTally.asked++;
      const b = broken(t, p.start + p.prefix.length, shape);
      const edited = b.slice(0, p.start) + p.prefix + b.slice(p.start + p.prefix.length);
      const cursorLine = p.line + 1;
      const column = p.start + p.prefix.length - (edited.lastIndexOf("\n", p.start + p.prefix.length - 1) + 1);
      try {
        const r = (await syntactic(
          {
            ...req(root, p.file, edited),
            context: { ...req(root, p.file, edited).context, cursor: { line: cursorLine, column } },
          } as AipRequest,
          ctx(),
        )) as { items: unknown[] };
        brokenTally.success++;
        if (r.items.length > 0) brokenTally.with_items++;
      } catch (err) {
        if (brokenTally.failures.length < 10) brokenTally.failures.push(`${where} ${shape}: ${(err as Error).message}`);
      }
    }
    if (!withTyped) continue;
    sample("typed");
    const y = (await typed(req(root, p.file, buffer, 20_000), ctx())) as {
      items: { label: string }[];
      engine: string;
      receiver_kind?: string;
    };
    memberRecorder.record = undefined;
    engines[y.engine === "typed" ? "typed" : "syntactic"]++;
    const yr = y.items.findIndex((i) => i.label === p.name);
    positions.push({
      where,
      category: p.category,
      jedi: jr,
      syntactic: sr,
      typed: yr,
      engine: y.engine,
      receiver_kind: y.receiver_kind,
      top: y.items.slice(0, 5).map((i) => i.label),
    });
    count(
      tallies.typed[p.category],
      yr,
      `${where} (got: ${y.items
        .slice(0, 5)
        .map((i) => i.label)
        .join(", ")})`,
    );
  }
  pyright.close();
  if (cacheFile) writeFileSync(cacheFile, JSON.stringify([...recorded]));
  if (process.env.EVAL_POSITIONS_FILE) writeFileSync(process.env.EVAL_POSITIONS_FILE, JSON.stringify(positions));
  ms.sort((a, b) => a - b);
  const report = (k: "jedi" | "syntactic" | "typed") =>
    Object.fromEntries(cats.map((c) => [c, { ...rates(tallies[k][c]), misses: tallies[k][c].misses }]));
  return {
    corpus,
    positions: anchor.positions.length,
    jedi_version: anchor.jedi,
    anchor_ms: Math.round(anchorMs),
    jedi: report("jedi"),
    syntactic: report("syntactic"),
    typed: report("typed"),
    typed_engine_answers: engines,
    syntactic_ms: { p50: ms[Math.floor(ms.length / 2)], p95: ms[Math.floor(ms.length * 0.95)] },
    broken: { ...brokenTally, rate: brokenTally.success / Math.max(1, brokenTally.asked) },
    targets: { member_recall_at_5: 0.9, member_recall_at_1: 0.6, identifier_recall_at_5: 0.95, broken_success: 0.95 },
  };
}
