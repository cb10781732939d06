/**
 * A plan's cases through the checks (docs/agents.md, "testgen"): the file is typechecked against the
 * workspace and a case with an error in it is dropped; then, when the workspace has the runner, the file
 * is run and a failing case becomes `it.todo` with the failure; a run that hangs is killed at its
 * timeout and its cases are dropped. When the observation run already ran every case, its outcomes
 * stand in for the run. The counts and reasons go to the payload.
 */
import type { Options as PrettierOptions } from "prettier";
import { TextMemo } from "../lib/memo.js";
import { workspaceTrust } from "../lib/sandbox/workspace-run.js";
import { assemble, type TestCase, type TestPlan } from "./render.js";
import {
  findRunner,
  RECORDER,
  runTestFile,
  typecheck,
  type CheckProject,
  type Recorded,
  type Runner,
  type TestOutcome,
} from "./verify.js";

/** checks.skipped.run of a workspace nobody trusted (the notes say how to trust it). */
export const UNTRUSTED = "workspace not trusted";

export interface Verdict {
  test: string;
  outcome: "todo" | "dropped";
  reason: string;
}

export interface Checks {
  typecheck: "passed" | "failed" | "skipped";
  run: "passed" | "failed" | "timeout" | "load-error" | "skipped";
  runner: Runner | null;
  run_ms?: number;
  /** Why each skipped check was skipped (a missing runner is a skipped run, never a failed typecheck). */
  skipped: { typecheck?: string; run?: string };
  /** Where the test framework's types came from when typechecking: the workspace, or an untyped stub of them. */
  framework_types?: "workspace" | "stub";
  /** What was fallen back to (no tsconfig, a stub for the framework's types, …) and why a check was skipped. */
  notes: string[];
  /** Whether the workspace's code may run (docs/security.md, "Workspace trust"), and how to trust it. */
  trust?: { trusted: boolean; hint: string };
}

export interface Checked {
  keep: TestCase[];
  madeTodo: { title: string; reason: string }[];
  verdicts: Verdict[];
  checks: Checks;
}

export interface CheckOptions {
  project: CheckProject;
  /** Absolute path of the test file (where it would be written). */
  testFile: string;
  /** Relative to the root. */
  testPath: string;
  ts: boolean;
  /** The run's timeout; 0: do not run. */
  runTimeoutMs: number;
  /** The real workspace root, when the request had one (runs need it). */
  root?: string;
  /** The request's: aborting it kills a run in progress. */
  signal?: AbortSignal;
  /**
   * Outcomes of the cases from a run that already ran them (the observation run); when every kept case
   * is among them or was observed there, the runner is not started again.
   */
  ran?: { tests: TestOutcome[]; ms: number };
}

/** Formatted files by their text: the file checked is, most often, the file answered. */
const formatted = new TextMemo<Promise<string>>(16);

export async function formatTest(text: string, ts: boolean): Promise<string> {
  return formatted.get(`${ts ? "ts" : "js"}\0${text}`, () =>
    prettierFormat(text, { parser: ts ? "typescript" : "babel", printWidth: 100 }),
  );
}

/** prettier, loaded on first use: `--manifest`, refusals and vetting runs never format. */
export async function prettierFormat(text: string, options: PrettierOptions): Promise<string> {
  const { format } = await import("prettier");
  return format(text, options);
}

/** The 1-based line ranges of each case in the formatted file (from its title to the next case's). */
function caseLines(content: string, cases: TestCase[]): { c: TestCase; from: number; to: number }[] {
  const lines = content.split("\n");
  const starts = cases
    .map((c) => {
      // prettier picks the quotes: double, or single when the title holds double quotes.
      const forms = [JSON.stringify(c.title), `'${c.title.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`];
      return { c, from: lines.findIndex((l) => forms.some((f) => l.includes(f))) + 1 };
    })
    .filter((x) => x.from > 0)
    .sort((a, b) => a.from - b.from);
  return starts.map((s, i) => ({ ...s, to: i + 1 < starts.length ? starts[i + 1]!.from - 1 : lines.length }));
}

/** Typecheck, then run; see the module comment. */
export async function checkPlan(plan: TestPlan, opts: CheckOptions): Promise<Checked> {
  const verdicts: Verdict[] = [];
  const madeTodo: { title: string; reason: string }[] = [];
  const checks: Checks = {
    typecheck: "skipped",
    run: "skipped",
    runner: null,
    skipped: {},
    notes: [...opts.project.fallback],
  };
  const skip = (check: "typecheck" | "run", why: string): void => {
    checks.skipped[check] = why;
    checks.notes.push(`${check === "run" ? "not run" : "typecheck skipped"}: ${why}`);
  };
  let keep = plan.cases.slice();
  if (keep.length === 0) {
    skip("typecheck", "no case to check");
    skip("run", "no case to run");
    return { keep, madeTodo, verdicts, checks };
  }
  if (opts.ts) {
    const content = await formatTest(assemble(plan, keep), true);
    const tc = typecheck(opts.project, opts.testFile, content, plan.framework);
    if (tc.stub) checks.notes.push(tc.stub);
    checks.framework_types = tc.stub ? "stub" : "workspace";
    const ranges = caseLines(content, keep);
    const firstCase = ranges[0]?.from ?? Infinity;
    const header = tc.errors.filter((e) => e.line < firstCase);
    const failing = new Map<TestCase, string>();
    for (const e of tc.errors) {
      const r = ranges.find((x) => x.from <= e.line && e.line <= x.to);
      if (r && !failing.has(r.c)) failing.set(r.c, e.message);
    }
    if (header.length > 0) for (const c of keep) failing.set(c, header[0]!.message);
    for (const [c, why] of failing) verdicts.push({ test: c.title, outcome: "dropped", reason: `typecheck: ${why}` });
    keep = keep.filter((c) => !failing.has(c));
    checks.typecheck = tc.errors.length === 0 ? "passed" : "failed";
  } else skip("typecheck", "the test is JavaScript");
  if (keep.length === 0) {
    skip("run", "every case failed its typecheck");
    return { keep, madeTodo, verdicts, checks };
  }
  const runner = await findRunner(opts.root, plan.framework);
  const trust = runner && opts.root !== undefined ? workspaceTrust(opts.root) : undefined;
  if (trust) checks.trust = { trusted: trust.trusted, hint: trust.hint };
  const unrunnable = !runner || opts.root === undefined || opts.runTimeoutMs <= 0 || trust?.trusted !== true;
  if (unrunnable) {
    // A model's proposal is kept only when it passed a run.
    for (const c of keep.filter((x) => x.kind === "model"))
      verdicts.push({
        test: c.title,
        outcome: "dropped",
        reason: "not run: a model's proposal is kept only when it passes",
      });
    keep = keep.filter((x) => x.kind !== "model");
  }
  if (!runner || opts.root === undefined) {
    skip(
      "run",
      plan.framework === "node:test"
        ? "node:test files are only typechecked"
        : opts.root === undefined
          ? "no workspace_root: there is no runner to run the test with"
          : `the workspace has no ${plan.framework} installed (node_modules/.bin/${plan.framework})`,
    );
    return { keep, madeTodo, verdicts, checks };
  }
  if (trust?.trusted !== true) {
    checks.skipped.run = UNTRUSTED;
    checks.notes.push(`not run: ${UNTRUSTED}; ${trust?.hint ?? ""}`);
    return { keep, madeTodo, verdicts, checks };
  }
  if (opts.runTimeoutMs <= 0) {
    skip("run", "constraints.run_timeout_ms is 0, or no time is left before the request's deadline");
    return { keep, madeTodo, verdicts, checks };
  }
  checks.runner = runner;
  const ran = opts.ran;
  if (ran && keep.every((c) => c.kind === "observed" || ran.tests.some((t) => t.title === c.title))) {
    // Observed values were seen twice in that run; the other cases ran there as they are written.
    checks.run_ms = ran.ms;
    keep = failedToTodo(ran.tests, keep, madeTodo, verdicts);
    checks.run = madeTodo.length === 0 ? "passed" : "failed";
    return { keep, madeTodo, verdicts, checks };
  }
  const deadline = Date.now() + opts.runTimeoutMs;
  // First run: every case, the smoke cases recording what they returned.
  // The placeholder assertion is not run while recording: a function that returns undefined for typical
  // input is recorded (and asserted `toBeUndefined`), not failed by `toBeDefined`.
  const recording = keep.map((c) =>
    c.kind === "smoke"
      ? {
          ...c,
          body: c.body.replace(
            /\n[^\n]*\/\/ TODO: assert the expected value$/,
            `\n__agencyRecord(${JSON.stringify(c.title)}, result);`,
          ),
        }
      : c,
  );
  const first = await runTestFile(
    opts.root,
    runner,
    opts.testPath,
    await formatTest(assemble(plan, recording, [], RECORDER), opts.ts),
    opts.runTimeoutMs,
    opts.signal,
  );
  checks.run_ms = first.ms;
  const stop = runFailed(first, keep, verdicts, checks);
  if (stop) return { keep: stop === "drop" ? [] : keep, madeTodo, verdicts, checks };
  keep = failedToTodo(first.tests, keep, madeTodo, verdicts);
  // A recorded value becomes the assertion; the file is run again as it will be written.
  let changed = false;
  keep = keep.map((c) => {
    const r = c.kind === "smoke" ? first.records.get(c.title) : undefined;
    const assertion = r && recordedAssertion(r, plan.framework);
    if (!assertion) return c;
    changed = true;
    return {
      ...c,
      kind: "value" as const,
      body: c.body.replace(/\n[^\n]*\/\/ TODO: assert the expected value$/, `\n${assertion}`),
    };
  });
  if (changed && keep.length > 0) {
    const left = deadline - Date.now();
    if (left <= 0) {
      checks.notes.push("the second run (of the recorded values) did not fit in the run's timeout: not run");
    } else {
      const second = await runTestFile(
        opts.root,
        runner,
        opts.testPath,
        await formatTest(assemble(plan, keep), opts.ts),
        left,
        opts.signal,
      );
      checks.run_ms += second.ms;
      const stop2 = runFailed(second, keep, verdicts, checks);
      if (stop2) return { keep: stop2 === "drop" ? [] : keep, madeTodo, verdicts, checks };
      keep = failedToTodo(second.tests, keep, madeTodo, verdicts);
    }
  }
  checks.run = madeTodo.length === 0 ? "passed" : "failed";
  return { keep, madeTodo, verdicts, checks };
}

/** A run that did not run the tests: "drop" (timeout, load error: its cases dropped), "keep" (not collected), or undefined (it ran). */
function runFailed(
  res: Awaited<ReturnType<typeof runTestFile>>,
  keep: TestCase[],
  verdicts: Verdict[],
  checks: Checks,
): "drop" | "keep" | undefined {
  if (res.outcome === "timeout" || res.outcome === "load-error") {
    checks.run = res.outcome;
    for (const c of keep)
      verdicts.push({ test: c.title, outcome: "dropped", reason: `run: ${res.message ?? res.outcome}` });
    return "drop";
  }
  if (res.outcome !== "ran") {
    checks.skipped.run = res.message ?? res.outcome;
    checks.notes.push(`not run: ${checks.skipped.run}`);
    return "keep";
  }
  return undefined;
}

function failedToTodo(
  tests: { title: string; status: string; message?: string }[],
  keep: TestCase[],
  madeTodo: { title: string; reason: string }[],
  verdicts: Verdict[],
): TestCase[] {
  const failed = new Map(tests.filter((t) => t.status === "failed").map((t) => [t.title, t.message ?? "failed"]));
  for (const c of keep) {
    const why = failed.get(c.title);
    if (why === undefined) continue;
    // A model's proposal that fails is discarded; a deterministic case is left for a person to judge.
    if (c.kind === "model") {
      verdicts.push({ test: c.title, outcome: "dropped", reason: `run: ${why}` });
      continue;
    }
    madeTodo.push({ title: c.title, reason: `failed: ${why}` });
    verdicts.push({ test: c.title, outcome: "todo", reason: `run: ${why}` });
  }
  return keep.filter((c) => !failed.has(c.title));
}

/** The assertion of a recorded value: `toBe` for primitives, `toEqual` for data, `toBeUndefined`. */
function recordedAssertion(r: Recorded, framework: string): string | undefined {
  if (framework === "node:test") return undefined;
  if (r.undefined) return "expect(result).toBeUndefined();";
  if (r.json === undefined) return undefined;
  const data = r.json.startsWith("{") || r.json.startsWith("[");
  return `expect(result).${data ? "toEqual" : "toBe"}(${r.json});`;
}
