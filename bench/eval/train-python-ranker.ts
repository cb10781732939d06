/**
 * Fits the weights of the Python member ranking (agents/lib/completion/python/member-ranker.ts) on the
 * corpus's positions and writes them to agents/lib/completion/python/member-weights.ts:
 *   npm run train:python-ranker
 * The positions are the eval's (bench/eval/python-completion.ts, ../shared/corpus/python only: the
 * held-out libraries are never trained on), each member completion's candidates with their features,
 * from the syntactic engine and from pyright's list (EVAL_ANCHOR_FILE and EVAL_TYPED_CACHE as for the
 * eval); then every other `self.` and member position of the corpus with the syntactic engine alone
 * (python_anchor.py with ANCHOR_SKIP_JEDI=1; TRAIN_ALL_POSITIONS=0 leaves them out).
 * TRAIN_SAMPLES=FILE keeps the candidates: read from it when it exists, else written to it.
 * TRAIN_L2 sets the penalty (0.05); TRAIN_L2=cv picks it per group among TRAIN_CV_L2 by leave-one-project-out
 * recall; TRAIN_CV=1 prints that recall for each of TRAIN_CV_L2 and writes nothing.
 * The model: a weighted sum of the features, fitted as a softmax over each position's candidates
 * (the expected name's probability), with an L2 penalty towards the hand-written rules' weights (START:
 * what the ranking was before it was learned, so that a feature the corpus says little about keeps
 * the rule's say); one set of weights for `self.` and one for any other receiver. Each position is also seen with the expected name's first letter typed, so
 * that the weight of the prefix's match is learned too.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { DUNDER_PENALTY, MEMBER_FEATURES, type MemberGroup } from "../../agents/lib/completion/python/member-ranker.js";
import { matchScore } from "../../agents/lib/completion/rank.js";
import { evalPythonCompletion, type MemberSample } from "./python-completion.js";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "../../..");
const CORPUS = resolve(ROOT, "../shared/corpus/python");
const OUT = join(ROOT, "agents/lib/completion/python/member-weights.ts");
/**
 * The L2 penalty per weight (the corpus has a few hundred `self.` positions: the weights stay near
 * START); TRAIN_L2=cv picks it per group by leave-one-project-out cross-validation.
 */
let L2 = process.env.TRAIN_L2 === "cv" ? 0.05 : Number(process.env.TRAIN_L2 ?? 0.05);
const STEPS = 800;

/**
 * The hand-written rules' points (syntactic.ts before the ranking was learned) on this scale (a
 * twentieth): own members before the buffer's other names, use in the buffer (count, same receiver,
 * nearness), the workspace's use after the same receiver, the standard library prior, a name like
 * where the value goes, the method being written and `_private` outside its class last; a member of
 * the class an untyped receiver looks like counts nearly as one of its known class.
 */
const START: Partial<Record<(typeof MEMBER_FEATURES)[number], number>> = {
  match: 1,
  declared: 2.5,
  inherited: -0.25,
  typed: 0.25,
  checker_missing: -0.75,
  buffer_only: -0.5,
  buffer_count: 0.6,
  buffer_pair: 1.25,
  near: 1,
  workspace_pair: 0.5,
  prior: 0.5,
  named_target: 0.8,
  named_function: 0.8,
  current_method: -2,
  private: -0.4,
  private_own: 0.4,
  lookalike: 2,
};
const W0 = MEMBER_FEATURES.map((f) => START[f] ?? 0);
const MATCH = MEMBER_FEATURES.indexOf("match");
const DUNDER = MEMBER_FEATURES.indexOf("dunder");

/** A candidate's score as member-ranker.ts computes it. */
function score(f: number[], w: number[]): number {
  return f.reduce((a, v, i) => a + v * w[i]!, 0) - DUNDER_PENALTY * f[DUNDER]!;
}

interface Example {
  x: number[][];
  y: number;
}

/** The examples of one sample: as asked (nothing typed) and with the expected name's first letter typed. */
function examples(s: MemberSample): Example[] {
  const out: Example[] = [];
  const y = s.rows.findIndex((r) => r.label === s.expected);
  if (y < 0) return out;
  out.push({ x: s.rows.map((r) => r.features), y });
  const prefix = s.expected[0]!;
  const kept = s.rows.filter((r) => matchScore(r.label, prefix) >= 0 && !(r.label === prefix));
  const ky = kept.findIndex((r) => r.label === s.expected);
  if (ky >= 0)
    out.push({
      x: kept.map((r) => r.features.map((v, i) => (i === MATCH ? matchScore(r.label, prefix) / 100 : v))),
      y: ky,
    });
  return out;
}

/** Mean negative log-likelihood and its gradient at `w`. */
function lossAndGrad(data: Example[], w: number[]): { loss: number; grad: number[] } {
  const grad = w.map((v, i) => L2 * (v - W0[i]!));
  let loss = w.reduce((a, v, i) => a + (L2 / 2) * (v - W0[i]!) ** 2, 0);
  for (const { x, y } of data) {
    const s = x.map((f) => score(f, w));
    const max = Math.max(...s);
    const e = s.map((v) => Math.exp(v - max));
    const z = e.reduce((a, v) => a + v, 0);
    loss += (Math.log(z) + max - s[y]!) / data.length;
    x.forEach((f, k) => {
      const p = e[k]! / z - (k === y ? 1 : 0);
      if (p !== 0) f.forEach((v, i) => (grad[i]! += (p * v) / data.length));
    });
  }
  return { loss, grad };
}

/** Adam on the full batch. */
function fit(data: Example[]): number[] {
  const n = MEMBER_FEATURES.length;
  const w = [...W0];
  const m = new Array<number>(n).fill(0);
  const v = new Array<number>(n).fill(0);
  const lr = 0.03;
  for (let t = 1; t <= STEPS; t++) {
    const { grad } = lossAndGrad(data, w);
    for (let i = 0; i < n; i++) {
      m[i] = 0.9 * m[i]! + 0.1 * grad[i]!;
      v[i] = 0.999 * v[i]! + 0.001 * grad[i]! ** 2;
      w[i]! -= (lr * (m[i]! / (1 - 0.9 ** t))) / (Math.sqrt(v[i]! / (1 - 0.999 ** t)) + 1e-8);
    }
  }
  return w;
}

function recall(data: Example[], w: number[]): { at1: number; at5: number } {
  let at1 = 0;
  let at5 = 0;
  for (const { x, y } of data) {
    const s = x.map((f) => score(f, w));
    const rank = s.filter((v, k) => v > s[y]! || (v === s[y]! && k < y)).length;
    if (rank === 0) at1++;
    if (rank < 5) at5++;
  }
  return { at1: at1 / Math.max(1, data.length), at5: at5 / Math.max(1, data.length) };
}

async function main(): Promise<void> {
  const file = process.env.TRAIN_SAMPLES;
  let samples: MemberSample[] = [];
  if (file && existsSync(file)) samples = JSON.parse(readFileSync(file, "utf8")) as MemberSample[];
  else {
    const python = process.env.EVAL_PYTHON ?? "/usr/bin/python3";
    await evalPythonCompletion(CORPUS, {
      perFile: Number(process.env.EVAL_PER_FILE ?? 6),
      python,
      samples: (s) => samples.push(s),
    });
    if (process.env.TRAIN_ALL_POSITIONS !== "0") {
      const seen = new Set(samples.map((s) => s.where));
      const anchor = JSON.parse(
        execFileSync(python, [join(ROOT, "bench/eval/python_anchor.py"), CORPUS, "100000", "7"], {
          env: { ...process.env, ANCHOR_SKIP_JEDI: "1" },
          maxBuffer: 256 * 1024 * 1024,
          encoding: "utf8",
        }),
      ) as { positions: { category: string }[] };
      anchor.positions = anchor.positions.filter((p) => p.category !== "identifier");
      const dir = mkdtempSync(join(tmpdir(), "aip-train-"));
      const env = { ...process.env };
      try {
        writeFileSync(join(dir, "anchor.json"), JSON.stringify(anchor));
        process.env.EVAL_ANCHOR_FILE = join(dir, "anchor.json");
        process.env.EVAL_PYTHON_TYPED = "0";
        delete process.env.EVAL_TYPED_CACHE;
        await evalPythonCompletion(CORPUS, {
          perFile: 100000,
          python,
          samples: (s) => {
            if (!seen.has(s.where)) samples.push(s);
          },
        });
      } finally {
        process.env = env;
        rmSync(dir, { recursive: true, force: true });
      }
    }
    if (file) writeFileSync(file, JSON.stringify(samples));
  }
  const projects = [...new Set(samples.map((s) => s.where.split("/")[0]!))];
  /** Recall with each project held out in turn: fitted on the others, scored on it (nothing typed). */
  const crossValidated = (group: MemberGroup, l2: number): { at1: number; at5: number; n: number } => {
    L2 = l2;
    let at1 = 0;
    let at5 = 0;
    let n = 0;
    const of = samples.filter((s) => s.group === group);
    for (const p of projects) {
      const w = fit(of.filter((s) => !s.where.startsWith(`${p}/`)).flatMap(examples));
      const test = of.filter((s) => s.where.startsWith(`${p}/`)).flatMap((s) => examples(s).slice(0, 1));
      const r = recall(test, w);
      at1 += r.at1 * test.length;
      at5 += r.at5 * test.length;
      n += test.length;
    }
    return { at1: at1 / Math.max(1, n), at5: at5 / Math.max(1, n), n };
  };
  const penalties = (process.env.TRAIN_CV_L2 ?? "0.01,0.05,0.2").split(",").map(Number);
  // TRAIN_CV=1: the cross-validated recall of each penalty in TRAIN_CV_L2; nothing written.
  if (process.env.TRAIN_CV === "1") {
    const out: Record<string, unknown> = {};
    for (const l2 of penalties)
      for (const group of ["self", "other"] as const) out[`${group} l2=${l2}`] = crossValidated(group, l2);
    console.log(JSON.stringify(out, null, 2));
    return;
  }
  // TRAIN_L2=cv: each group's penalty is the one of TRAIN_CV_L2 with the best cross-validated recall
  // (@1 and @5 alike), so that the weights are chosen for projects they were not fitted on.
  const chosen: Record<MemberGroup, number> = { self: L2, other: L2 };
  const cv: Record<string, unknown> = {};
  if (process.env.TRAIN_L2 === "cv")
    for (const group of ["self", "other"] as const) {
      let best = -1;
      for (const l2 of penalties) {
        const r = crossValidated(group, l2);
        cv[`${group} l2=${l2}`] = r;
        if (r.at1 + r.at5 > best) {
          best = r.at1 + r.at5;
          chosen[group] = l2;
        }
      }
    }
  const weights: Record<MemberGroup, number[]> = { self: [], other: [] };
  const report: Record<string, unknown> = {};
  for (const group of ["self", "other"] as const) {
    const of = samples.filter((s) => s.group === group);
    const data = of.flatMap(examples);
    const asked = of.flatMap((s) => examples(s).slice(0, 1));
    L2 = chosen[group];
    weights[group] = fit(data);
    report[group] = {
      l2: chosen[group],
      samples: of.length,
      examples: data.length,
      loss: Math.round(lossAndGrad(data, weights[group]).loss * 1000) / 1000,
      train_recall: recall(data, weights[group]),
      train_recall_nothing_typed: recall(asked, weights[group]),
    };
  }
  const row = (w: number[]): string => `[${w.map((v) => Math.round(v * 1000) / 1000).join(", ")}]`;
  writeFileSync(
    OUT,
    [
      "/** Generated by bench/eval/train-python-ranker.ts (`npm run train:python-ranker`): do not edit. */",
      'import type { MemberWeights } from "./member-ranker.js";',
      "",
      "// prettier-ignore",
      "export const PYTHON_MEMBER_WEIGHTS: MemberWeights = {",
      `  features: [${MEMBER_FEATURES.map((f) => JSON.stringify(f)).join(", ")}],`,
      `  self: ${row(weights.self)},`,
      `  other: ${row(weights.other)},`,
      "};",
      "",
    ].join("\n"),
  );
  console.log(
    JSON.stringify({ wrote: OUT, ...report, ...(Object.keys(cv).length > 0 ? { cross_validated: cv } : {}) }, null, 2),
  );
}

await main();
