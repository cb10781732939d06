/**
 * Characterization tests (docs/agents.md, "testgen", "Observed behaviour"): where no example states a
 * result, the function is called on inputs built from its types and the workspace's own calls
 * (inputs.ts), in the workspace's own test runner, on a generated file only, inside the workspace
 * sandbox (agents/lib/sandbox/workspace-run.ts: trusted workspaces only, no network, read-only
 * workspace, limits). Each input is called twice; what it returned (or threw) both times the same is
 * written into the test as `toBe` / `toEqual` / `toThrow`, titled "observed: …". A result that differs
 * between the two calls, that is no plain data, or a call that does not settle within its bound is
 * not asserted and is reported. A function with side effects (effects.ts) is never called.
 */
import { randomBytes } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { posix } from "node:path";
import { runWorkspaceCode } from "../lib/sandbox/workspace-run.js";
import { effectReason, type Effect } from "./effects.js";
import { assemble, type Framework, type StubCase, type TestCase, type TestPlan } from "./render.js";
import { failureLine, warmEnabled, type TestOutcome } from "./verify.js";
import { runWarm } from "./warm.js";

/** One call may take this long before it is dropped (each input is called twice). */
export const CALL_TIMEOUT_MS = 1000;
/** Observed cases kept per function, at most (those with a result not seen yet come first). */
export const MAX_OBSERVED = 10;
/** An observed value is asserted when its JSON is at most this long. */
const MAX_VALUE_CHARS = 600;
/** Errors that say the sandbox, not the function, refused: no network, a read-only workspace. */
const ENVIRONMENT_ERRORS =
  /fetch failed|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ENETUNREACH|EROFS|EACCES|EPERM|getaddrinfo|socket hang up/i;
const BUILTIN_ERRORS = new Set(["TypeError", "RangeError", "SyntaxError", "ReferenceError", "URIError", "EvalError"]);

const MARK = "__AGENCY_OBSERVED__";

/**
 * Put into the observation file: `__agencyObserve(id, f)` calls `f` twice, each time recording what it
 * returned or threw (sync or async, within CALL_TIMEOUT_MS), then fails the test with the record in the
 * message, where the runner's JSON report carries it out of the sandbox.
 */
const OBSERVER = `
// eslint-disable-next-line
const __agencyShape = (v: any): any => {
  if (v === undefined) return { k: "undefined" };
  if (typeof v === "number" && Number.isNaN(v)) return { k: "nan" };
  // The value as source text: literals, arrays, plain objects, Dates, Maps and Sets of those, and class
  // instances by their own enumerable fields (toEqual does not compare prototypes). A function inside
  // the data is any function; a plain object's symbol keys are left out (the assertion is then a
  // toMatchObject of the rest).
  const seen = new Set<any>();
  let partial = false;
  const src = (x: any, d: number): string | undefined => {
    if (typeof x === "function") return d > 0 ? "expect.any(Function)" : undefined;
    if (x === null) return "null";
    if (x === undefined) return "undefined";
    if (typeof x === "string" || typeof x === "boolean") return JSON.stringify(x);
    if (typeof x === "number") return Object.is(x, -0) ? "-0" : Number.isNaN(x) ? "NaN" : String(x);
    if (typeof x === "bigint") return String(x) + "n";
    if (typeof x !== "object" || d > 6 || seen.has(x)) return undefined;
    seen.add(x);
    try {
      if (x instanceof Date) return Number.isNaN(x.getTime()) ? undefined : "new Date(" + JSON.stringify(x.toISOString()) + ")";
      if (Array.isArray(x)) {
        // Holes or extra keys (out[1.5] = 1) are not what an array literal writes.
        if (Object.keys(x).length !== x.length) return undefined;
        const parts = x.map((y: any) => src(y, d + 1));
        return parts.every((p: any) => p !== undefined) ? "[" + parts.join(", ") + "]" : undefined;
      }
      if (x instanceof Map || x instanceof Set) {
        const parts = [...x].map((y: any) => src(y, d + 1));
        if (!parts.every((p: any) => p !== undefined)) return undefined;
        return "new " + (x instanceof Map ? "Map" : "Set") + "([" + parts.join(", ") + "])";
      }
      const proto = Object.getPrototypeOf(x);
      const plain = proto === Object.prototype || proto === null;
      if (Object.getOwnPropertySymbols(x).length > 0) {
        if (!plain) return undefined;
        partial = true;
      }
      const keys = Object.keys(x);
      if (!plain && (keys.length === 0 || typeof x.then === "function" || ArrayBuffer.isView(x))) return undefined;
      const parts: string[] = [];
      for (const k of keys) {
        const p = src(x[k], d + 1);
        if (p === undefined) return undefined;
        parts.push((/^[A-Za-z_$][\\w$]*$/.test(k) ? k : JSON.stringify(k)) + ": " + p);
      }
      return "{" + (parts.length ? " " + parts.join(", ") + " " : "") + "}";
    } finally {
      seen.delete(x);
    }
  };
  const text = src(v, 0);
  if (text !== undefined) return { k: "src", text, prim: v === null || typeof v !== "object", partial };
  return { k: "other", type: v === null ? "null" : typeof v === "object" ? (v.constructor?.name ?? "Object") : typeof v };
};
// eslint-disable-next-line
const __agencyOnce = async (f: () => any): Promise<any> => {
  let v: any;
  try {
    v = f();
  } catch (e: any) {
    return { t: "throw", async: false, name: e?.constructor?.name ?? typeof e, message: String(e?.message ?? e).slice(0, 300) };
  }
  const promised = v !== null && (typeof v === "object" || typeof v === "function") && typeof v.then === "function";
  if (!promised) return { t: "value", promised, ...__agencyShape(v) };
  let timer: any;
  const late = new Promise((r) => { timer = setTimeout(() => r({ t: "timeout" }), ${CALL_TIMEOUT_MS}); });
  try {
    return await Promise.race([
      Promise.resolve(v).then(
        (x: any) => ({ t: "value", promised, ...__agencyShape(x) }),
        (e: any) => ({ t: "throw", async: true, name: e?.constructor?.name ?? typeof e, message: String(e?.message ?? e).slice(0, 300) }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
};
// eslint-disable-next-line
const __agencyObserve = async (id: number, f: () => any): Promise<void> => {
  const a = await __agencyOnce(f);
  const b = a.t === "timeout" ? a : await __agencyOnce(f);
  throw new Error("${MARK}" + JSON.stringify({ id, a, b }));
};
`;

type Shape =
  | { k: "src"; text: string; prim: boolean; partial?: boolean }
  | { k: "undefined" }
  | { k: "nan" }
  | { k: "other"; type: string };

type Outcome =
  | ({ t: "value"; promised: boolean } & Shape)
  | { t: "throw"; async: boolean; name: string; message: string }
  | { t: "timeout" };

export interface ObserveInput {
  root: string;
  framework: Framework;
  /** The final test's path, root-relative; the observation file sits beside it. */
  testPath: string;
  /** The plan, for its imports (its cases are not run). */
  plan: TestPlan;
  /** How the test calls the function: `fn`, `Cls.m`, `instance.m`. */
  callee: string;
  /** Statements before the call (`const instance = new C(…);`), or "". */
  setup: string;
  vectors: string[][];
  /** Argument lists for calling what the first vector's call returns, when that is a function. */
  resultArgs?: string[][];
  timeoutMs: number;
  signal?: AbortSignal;
  /** The plan's other cases, run as they are in the same runner start (their outcomes come back in `ran`). */
  extra?: TestCase[];
}

export interface Observation {
  status: "observed" | "untrusted" | "not-run";
  cases: TestCase[];
  /** How the `extra` cases fared in the observation run (when it ran them): the check run need not run them again. */
  ran?: { tests: TestOutcome[]; ms: number };
  /** Why nothing could be pinned (the stub's reason), when no case was observed. */
  reason?: string;
  notes: string[];
  /** How to trust the workspace, when it is not trusted. */
  hint?: string;
  ms?: number;
}

interface Report {
  testResults?: {
    message?: string;
    failureMessage?: string;
    assertionResults?: { title: string; status: string; failureMessages?: string[] }[];
  }[];
}

/** The runner's JSON report in its stdout (vitest `--reporter=json`, jest `--json`). */
function reportIn(stdout: string): Report | undefined {
  const at = stdout.search(/\{"num(Total|Failed|Passed)/);
  if (at < 0) return undefined;
  const text = stdout.slice(at);
  for (let end = text.length; end > 0; end = text.lastIndexOf("}", end - 1)) {
    try {
      return JSON.parse(text.slice(0, end + 1)) as Report;
    } catch {
      // a trailing line after the report
    }
    if (end === 0) break;
  }
  return undefined;
}

const short = (s: string, n: number): string => {
  const one = s.replace(/\s+/g, " ");
  return one.length > n ? `${one.slice(0, n - 3)}...` : one;
};

/** The assertion of one observed result, or why it is not asserted. */
function assertion(call: string, a: Outcome, b: Outcome): { body: string; shown: string } | { skip: string } {
  if (a.t === "timeout" || b.t === "timeout") return { skip: `did not settle within ${CALL_TIMEOUT_MS} ms` };
  if (JSON.stringify(a) !== JSON.stringify(b)) return { skip: "gave a different result on a second call" };
  if (a.t === "throw") {
    if (ENVIRONMENT_ERRORS.test(a.message))
      return { skip: `failed in the sandbox (no network, read-only workspace): ${short(a.message, 80)}` };
    const arg = BUILTIN_ERRORS.has(a.name)
      ? a.name
      : a.message !== "" && a.message.length <= 120 && !a.message.includes("\n")
        ? JSON.stringify(a.message)
        : "";
    const body = a.async ? `await expect(${call}).rejects.toThrow(${arg});` : `expect(() => ${call}).toThrow(${arg});`;
    return { body, shown: `throws ${BUILTIN_ERRORS.has(a.name) ? a.name : short(a.message || a.name, 30)}` };
  }
  const subject = `expect(${a.promised ? "await " : ""}${call})`;
  switch (a.k) {
    case "undefined":
      return { body: `${subject}.toBeUndefined();`, shown: "undefined" };
    case "nan":
      return { body: `${subject}.toBeNaN();`, shown: "NaN" };
    case "src": {
      if (a.text.length > MAX_VALUE_CHARS) return { skip: `returned ${a.text.length} characters of data` };
      const matcher = a.prim ? "toBe" : a.partial ? "toMatchObject" : "toEqual";
      return { body: `${subject}.${matcher}(${a.text});`, shown: a.text };
    }
    default:
      return { skip: `returned ${/^[aeiou]/i.test(a.type) ? "an" : "a"} ${a.type}, not plain data` };
  }
}

/** The observation file in a fresh start of the workspace's runner, in the sandbox. */
async function coldRun(
  input: ObserveInput,
  framework: "vitest" | "jest",
  rel: string,
  content: string,
): ReturnType<typeof runWorkspaceCode> {
  const bin = `node_modules/.bin/${framework}`;
  const argv =
    framework === "vitest"
      ? [`${input.root}/${bin}`, "run", rel, "--reporter=json", `--testTimeout=${CALL_TIMEOUT_MS * 3}`]
      : [
          `${input.root}/${bin}`,
          "--runTestsByPath",
          rel,
          "--json",
          "--ci",
          "--watchAll=false",
          `--testTimeout=${CALL_TIMEOUT_MS * 3}`,
        ];
  // A linked node_modules (npm link, a shared store) is read where it resolves, read-only.
  let modules: string | undefined;
  try {
    const real = realpathSync(`${input.root}/node_modules`);
    if (!real.startsWith(`${realpathSync(input.root)}/`)) modules = real;
  } catch {
    modules = undefined;
  }
  return runWorkspaceCode({
    ...(modules !== undefined ? { readOnlyPaths: [modules] } : {}),
    workspaceRoot: input.root,
    argv,
    files: { [rel]: content },
    env: { CI: "1", NODE_ENV: "test", FORCE_COLOR: "0", NO_COLOR: "1" },
    timeoutMs: input.timeoutMs,
    ...(input.signal ? { signal: input.signal } : {}),
  });
}

/** Observe the function on each input (see the module comment). */
export async function observe(input: ObserveInput): Promise<Observation> {
  const { plan, framework } = input;
  if (framework === "node:test")
    return { status: "not-run", cases: [], notes: [], reason: "node:test files are not run" };
  const dir = posix.dirname(input.testPath);
  const m = /\.test\.([cm]?[jt]sx?)$/.exec(input.testPath);
  const ext = m ? m[1]! : "ts";
  const ts = /ts/.test(ext);
  const base = posix.basename(input.testPath).replace(/\.test\.[cm]?[jt]sx?$/, "");
  const rel = posix.join(dir, `${base}.agency-observe.test.${ext}`);
  const calls = input.vectors.map((v) => `${input.callee}(${v.join(", ")})`);
  if (calls[0] !== undefined) calls.push(...(input.resultArgs ?? []).map((r) => `${calls[0]!}(${r.join(", ")})`));
  const extra = input.extra ?? [];
  const probe: TestPlan = {
    ...plan,
    todos: [],
    stubs: [],
    cases: [
      ...extra,
      ...calls.map((c, i) => ({
        title: `observe ${i}`,
        body: `${input.setup}await __agencyObserve(${i}, () => ${c});`,
        async: true,
        kind: "observed" as const,
      })),
    ],
  };
  const observer = ts
    ? OBSERVER
    : OBSERVER.replace(/: any\b|: Promise<any>|: Promise<void>|: \(\) => any|: number|: boolean/g, "");
  const content = assemble(probe, probe.cases, [], observer);
  const started = Date.now();
  const timedOut = (): Observation => ({
    status: "not-run",
    cases: [],
    notes: [`observation run did not finish in ${input.timeoutMs} ms (a call that never returns?): killed`],
    reason: "not observed: the observation run timed out",
    ms: Date.now() - started,
  });
  let ran: { report: Report | undefined; stderr: string; exit: string } | undefined;
  if (framework === "vitest" && warmEnabled()) {
    // The workspace's warm runner (warm.ts); a unique name, since it keeps what it loaded.
    const unique = posix.join(dir, `${base}.agency-observe-${randomBytes(4).toString("hex")}.test.${ext}`);
    const w = await runWarm(input.root, unique, content, input.timeoutMs, input.signal);
    if (w?.outcome === "timeout") return timedOut();
    if (w?.outcome === "cancelled")
      return { status: "not-run", cases: [], notes: [], reason: "not observed: cancelled", ms: w.ms };
    if (w?.outcome === "ran")
      ran = {
        report: w.answer.file
          ? { testResults: [{ message: w.answer.file.message, assertionResults: w.answer.tests }] }
          : undefined,
        stderr: w.answer.collected ? "" : `the workspace's vitest configuration does not collect ${unique}`,
        exit: "0",
      };
  }
  if (!ran) {
    const res = await coldRun(input, framework, rel, content);
    if (res.status === "skipped") {
      const untrusted = /not trusted/.test(res.reason);
      return {
        status: untrusted ? "untrusted" : "not-run",
        cases: [],
        notes: [`observation run ${res.reason} (${res.hint})`],
        reason: untrusted
          ? `not observed: the workspace is not trusted; ${res.hint}`
          : `not observed: ${res.reason.replace(/^skipped: /, "")}`,
        hint: res.hint,
        ms: Date.now() - started,
      };
    }
    if (res.timedOut) return timedOut();
    ran = { report: reportIn(res.stdout), stderr: res.stderr, exit: String(res.exitCode) };
  }
  const ms = Date.now() - started;
  const report = ran.report;
  const results = report?.testResults?.[0]?.assertionResults ?? [];
  if (results.length === 0) {
    const why = (report?.testResults?.[0]?.message || report?.testResults?.[0]?.failureMessage || ran.stderr)
      // eslint-disable-next-line no-control-regex
      .replace(/\u001b\[[0-9;]*m/g, "")
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l !== "");
    return {
      status: "not-run",
      cases: [],
      notes: [`observation run did not run the calls: ${short(why ?? `exit ${ran.exit}`, 200)}`],
      reason: "not observed: the observation file did not load",
      ms,
    };
  }
  const found: { id: number; case: TestCase; shown: string }[] = [];
  const notes: string[] = [];
  const skips: string[] = [];
  const titles = new Set<string>();
  const extraTitles = new Set(extra.map((c) => c.title));
  const ranTests: TestOutcome[] = results
    .filter((r) => extraTitles.has(r.title))
    .map((r) => ({
      title: r.title,
      status: r.status === "passed" ? "passed" : r.status === "failed" ? "failed" : "skipped",
      ...(r.status === "failed" ? { message: failureLine(r.failureMessages?.join("\n")) } : {}),
    }));
  for (const r of results) {
    const text = (r.failureMessages ?? []).join("\n");
    const at = text.indexOf(MARK);
    if (at < 0) continue;
    const line = text.slice(at + MARK.length).split("\n")[0]!;
    let rec: { id: number; a: Outcome; b: Outcome };
    try {
      rec = JSON.parse(line) as typeof rec;
    } catch {
      continue;
    }
    const call = calls[rec.id];
    if (call === undefined) continue;
    const got = assertion(call, rec.a, rec.b);
    if ("skip" in got) {
      skips.push(`${short(call, 60)} ${got.skip}`);
      continue;
    }
    const title = `observed: ${short(call, 60)} → ${short(got.shown, 40)}`;
    if (titles.has(title)) continue;
    titles.add(title);
    found.push({
      id: rec.id,
      shown: got.shown,
      case: { title, body: `${input.setup}${got.body}`, async: got.body.includes("await "), kind: "observed" },
    });
  }
  const cases = keepObserved(found);
  if (skips.length > 0)
    notes.push(
      `not asserted: ${skips.slice(0, 4).join("; ")}${skips.length > 4 ? `; and ${skips.length - 4} more` : ""}`,
    );
  return {
    status: "observed",
    cases,
    notes,
    ms,
    // Every other case ran there as written (or there is none): the check needs no runner start of its own.
    ...(ranTests.length === extra.length ? { ran: { tests: ranTests, ms } } : {}),
    ...(cases.length === 0 ? { reason: `not pinned: ${skips[0] ?? "no call was observed"}` } : {}),
  };
}

/**
 * Up to MAX_OBSERVED of the observed cases, in the inputs' order: first one per distinct result (a
 * branch the others do not reach), then the rest as they come.
 */
function keepObserved(found: { id: number; case: TestCase; shown: string }[]): TestCase[] {
  const byId = [...found].sort((x, y) => x.id - y.id);
  const kept = new Set<(typeof found)[number]>();
  const results = new Set<string>();
  for (const f of byId)
    if (kept.size < MAX_OBSERVED && !results.has(f.shown)) {
      results.add(f.shown);
      kept.add(f);
    }
  for (const f of byId) if (kept.size < MAX_OBSERVED) kept.add(f);
  return byId.filter((f) => kept.has(f)).map((f) => f.case);
}

/** A kept case that asserts nothing (the happy path's `toBeDefined`), as a marked `it.skip` with the call and the reason. */
export function stubOf(c: TestCase, reason: string): StubCase {
  const body = c.body
    .replace(/const result = (.*);\n[^\n]*\/\/ TODO: assert the expected value$/s, "$1;")
    .concat("\n// TODO: assert what it returns");
  return { title: c.title, reason, body, async: c.async };
}

export interface CharacterizeOptions extends Omit<ObserveInput, "plan" | "callee" | "setup" | "vectors"> {
  /** Side effects seen in the code (effects.ts): the function is not called. */
  effects: Effect[];
  vectors: string[][];
  /** Where each vector came from ("call site src/a.ts:3", "types (p)"). */
  origins?: string[];
}

/**
 * Replace the plan's happy-path placeholder (`toBeDefined`) by observed cases; with side effects, or
 * when nothing could be observed, the placeholder stays and `finishStubs` makes it a marked stub.
 * Returns the observation (its `reason` is the stub's).
 */
export async function characterizePlan(plan: TestPlan, opts: CharacterizeOptions): Promise<Observation> {
  const smoke = plan.cases.find((c) => c.kind === "smoke");
  if (!smoke) return { status: "not-run", cases: [], notes: [] };
  if (opts.framework === "node:test" || !existsSync(`${opts.root}/node_modules/.bin/${opts.framework}`))
    return { status: "not-run", cases: [], notes: [] };
  if (opts.effects.length > 0) {
    // Not called in the check run either: the placeholder is a marked stub from here on.
    const reason = effectReason(opts.effects);
    plan.cases.splice(plan.cases.indexOf(smoke), 1);
    (plan.stubs ??= []).push(stubOf(smoke, reason));
    return { status: "not-run", cases: [], notes: [], reason };
  }
  // The placeholder's own call tells how the test calls the function (and builds an instance).
  const m = /^([\s\S]*?)const result = (?:await )?([\s\S]*?)\(([\s\S]*)\);\n[^\n]*$/.exec(smoke.body);
  if (!m || opts.vectors.length === 0) return { status: "not-run", cases: [], notes: [] };
  // The plan's other cases ride along: one runner start checks them and observes the function.
  const extra = plan.cases.filter((c) => c !== smoke);
  const obs = await observe({ ...opts, plan, callee: m[2]!, setup: m[1]!, extra });
  // A call an example or a guard already asserts is not asserted twice.
  const asserted = plan.cases.filter((c) => c !== smoke).map((c) => c.body);
  const before = obs.cases.length;
  obs.cases = obs.cases.filter((c) => {
    const call = /expect\((?:\(\) => |await )?(.*?)\)(?:\.rejects)?\.to\w+\(/.exec(c.body)?.[1];
    return call === undefined || !asserted.some((b) => b.includes(`${call})`) || b.includes(`${call};`));
  });
  if (obs.cases.length > 0) {
    const at = plan.cases.indexOf(smoke);
    plan.cases.splice(at, 1, ...obs.cases);
  } else if (before > 0) plan.cases.splice(plan.cases.indexOf(smoke), 1);
  return obs;
}

/**
 * After the checks: a placeholder case still kept (it pins nothing) becomes a marked `it.skip` with
 * the reason, so that `toBeDefined` is never a kept test's only assertion.
 */
export function finishStubs(plan: TestPlan, keep: TestCase[], reason: string): TestCase[] {
  const out: TestCase[] = [];
  for (const c of keep) {
    if (c.kind === "smoke") (plan.stubs ??= []).push(stubOf(c, reason));
    else out.push(c);
  }
  return out;
}
