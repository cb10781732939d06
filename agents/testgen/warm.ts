/**
 * A warm vitest per trusted workspace (docs/agents.md, "testgen", "How it is checked"): starting the
 * runner (its config, its Vite server, the transform of the workspace's modules) costs most of a run,
 * so one long-lived runner is kept per workspace, inside the workspace sandbox
 * (agents/lib/sandbox/workspace-run.ts, startWorkspaceProcess), and each generated file is handed to
 * it over stdin and run through vitest's Node API. The workspace stays read-only: the runner may write
 * only into private copies of the directories where the generated files go. A change to the
 * workspace's files (any file outside node_modules and dot-directories, or the installed packages)
 * restarts the runner before the next file; so does a file that does not answer within its timeout
 * (the runner is killed whole), a cancelled request, a runner that went over its limits, or one that
 * ran many files. Where the runner cannot be kept (not vitest, a vitest without the Node API, not
 * trusted), the caller runs the file the cold way. Unless the workspace picked its pool, the files run
 * in a thread, and with vitest 1-3 in one thread kept between files (see the DRIVER): the workspace's
 * modules are evaluated afresh for each file, and a file that changed a global or process.env leaves
 * the next file a fresh thread, so that no file's state reaches the next.
 */
import { createHash, randomBytes } from "node:crypto";
import { lstatSync, readdirSync, realpathSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { startWorkspaceProcess, workspaceTrust, type WorkspaceProcess } from "../lib/sandbox/workspace-run.js";
import { envString } from "../../protocol/util/env.js";

/** Warm runners kept at once (the least recently used is stopped). */
export const MAX_WARM_RUNNERS = 2;
/** A runner that has not been asked for this long is stopped. */
export const WARM_IDLE_MS = 5 * 60_000;
/** Files one runner runs before it is replaced (vitest keeps every file's results). */
export const WARM_MAX_FILES = 200;
/** CPU time of a runner over its whole life. */
export const WARM_CPU_LIMIT_MS = 10 * 60_000;
/** How long a runner may take to start (load its config, its Vite server). */
export const WARM_START_TIMEOUT_MS = 60_000;
/** Directories a runner may write generated files into; a request for another one restarts it with the union. */
const MAX_WRITABLE_DIRS = 16;
/** Workspace entries looked at for the change fingerprint. */
const MAX_FINGERPRINT_ENTRIES = 20_000;
/** Per-test timeout inside the runner (vitest's default). */
const TEST_TIMEOUT_MS = 5000;
/** Test files: no module imports them, so a new or changed one does not make the runner stale. */
const TEST_FILE = /\.(test|spec)\.[cm]?[jt]sx?$/;
/** Where the recorder writes inside the sandbox (a private /tmp). */
const RECORD_FILE = "/tmp/aip-warm-record.ndjson";

/**
 * The runner's side, run by the agent's node inside the sandbox with the workspace as its working
 * directory: it imports the workspace's own vitest, creates it once, then for each request line
 * writes the file, runs it, answers with the outcome of each test and what the recorder wrote, and
 * removes the file. Answers are the lines that start with the mark (the workspace's code may print).
 */
const GUARD_SOURCE = `import { rmSync, writeFileSync } from "node:fs";
const DIRTY = "/tmp/aip-warm-dirty";
const env = JSON.stringify(process.env);
const before = new Map(Reflect.ownKeys(globalThis).map((k) => [k, Object.getOwnPropertyDescriptor(globalThis, k)]));
writeFileSync(DIRTY, "1");
// Node defines some globals (AbortController, …) by a getter that a first read replaces with the value.
const same = (a, b) => !!a && !!b && (Object.is(a.value, b.value) && a.get === b.get && a.set === b.set || (a.get !== undefined && b.get === undefined && "value" in b));
export function __agencyGuardCheck() {
  const now = Reflect.ownKeys(globalThis);
  if (now.length === before.size && now.every((k) => same(before.get(k), Object.getOwnPropertyDescriptor(globalThis, k))) && JSON.stringify(process.env) === env)
    rmSync(DIRTY, { force: true });
}
`;

export const DRIVER = `
import { createInterface } from "node:readline";
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
const MARK = process.env.AGENCY_WARM_MARK;
const GUARD_SOURCE = ${JSON.stringify(GUARD_SOURCE)};
const RECORD = process.env.AGENCY_TESTGEN_RECORD;
const say = (o) => process.stdout.write("\\n" + MARK + JSON.stringify(o) + "\\n");
const msg = (e) => String((e && (e.stack || e.message)) || e).slice(0, 4000);
let vitest;
const project = () => (vitest.getRootProject ? vitest.getRootProject() : vitest.getCoreWorkspaceProject ? vitest.getCoreWorkspaceProject() : vitest.projects[0]);
try {
  const { createVitest } = await import("vitest/node");
  // One file runs at a time: one worker, not a pool of one per core that each loads the runtime and stays idle.
  const options = { watch: false, reporters: [{}], cache: false, fileParallelism: false, testTimeout: Number(process.env.AGENCY_WARM_TEST_TIMEOUT) };
  // The workspace is read-only: Vite's and vitest's caches go to the sandbox's private /tmp.
  vitest = await createVitest("test", options, { server: { watch: null }, cacheDir: "/tmp/aip-vite-cache" });
} catch (e) {
  say({ fatal: msg(e) });
  process.exit(1);
}
// Each run of vitest 1-3 recycles its test worker and vitest 4 ends it, so a file would start a fresh
// worker and load the test runtime again. Unless the workspace picked its pool: vitest 4 runs in a
// thread (cheaper to start than a process); vitest 1-3 run in one thread kept between files, where
// each file still gets the workspace's modules evaluated afresh (their transforms stay cached in the
// server) and a file that changed a global or process.env, or did not finish, gets the next file a
// fresh worker, as do WORKER_FILES files in a row.
const GUARD = "/tmp/aip-warm-guard.mjs";
const DIRTY = "/tmp/aip-warm-dirty";
const WORKER_FILES = 50;
const userTest = (c) => { const v = c && (c.vite || c.server); return (v && v.config && v.config.test) || {}; };
const picksOwn = (t) => t.pool !== undefined || (t.poolMatchGlobs && t.poolMatchGlobs.length > 0) || (t.browser && t.browser.enabled);
const projects = () => (vitest.projects && vitest.projects.length ? vitest.projects : [project()]);
async function tinypoolOf() {
  // vitest's own tinypool: beside it (hoisted, pnpm) or inside it.
  let dir = process.cwd() + "/node_modules/vitest";
  try { dir = realpathSync(dir); } catch {}
  for (const d of [dir + "/node_modules/tinypool", dirname(dir) + "/tinypool"]) {
    let pkg;
    try { pkg = JSON.parse(readFileSync(d + "/package.json", "utf8")); } catch { continue; }
    const ex = pkg.exports && pkg.exports["."];
    const rel = typeof ex === "string" ? ex : ex ? (ex.import && (ex.import.default || ex.import)) || ex.default : pkg.module || pkg.main;
    const m = await import(pathToFileURL(d + "/" + String(rel).replace(/^\\.\\//, "")).href);
    const T = m.Tinypool || m.default;
    return T && T.prototype && typeof T.prototype.recycleWorkers === "function" ? T : undefined;
  }
  return undefined;
}
let pool = String(vitest.config.pool);
let reuse = false;
let onWorker = 0;
let kept;
let renew = () => undefined;
const restore = [];
if (process.env.AGENCY_WARM_POOL !== "own" && !picksOwn(userTest(vitest)) && !projects().some((p) => picksOwn(userTest(p)))) {
  const T = Number(String(vitest.version || "1").split(".")[0]) < 4 ? await tinypoolOf().catch(() => undefined) : undefined;
  pool = "threads";
  for (const c of new Set([vitest.config, ...projects().map((p) => p.config)])) {
    if (!c) continue;
    const was = { pool: c.pool, poolOptions: c.poolOptions };
    restore.push(() => Object.assign(c, was));
    c.pool = pool;
    if (T) c.poolOptions = { ...c.poolOptions, threads: { ...(c.poolOptions && c.poolOptions.threads), isolate: false } };
  }
  if (T) {
    reuse = true;
    writeFileSync(GUARD, GUARD_SOURCE);
    const recycle = T.prototype.recycleWorkers;
    renew = () => (kept ? recycle.call(kept).then(() => (onWorker = 0)) : undefined);
    T.prototype.recycleWorkers = function (o) {
      kept = this;
      if (!reuse) return recycle.call(this, o);
      let dirty = onWorker >= WORKER_FILES;
      try { rmSync(DIRTY); dirty = true; } catch {}
      if (!dirty) return Promise.resolve();
      onWorker = 0;
      return recycle.call(this, o);
    };
  }
}
// Written first into each file in the kept worker: marks the worker dirty until the file's last
// hook finds the globals and process.env as they were before the file's imports ran.
function guarded(content) {
  return 'import { __agencyGuardCheck } from "' + GUARD + '";' + content + '\\nimport { afterAll as __agencyAfterAll } from "vitest";\\n__agencyAfterAll(__agencyGuardCheck);\\n';
}
// The workspace's modules the kept worker may hold (vitest 2-3 keep them between files): evaluated again.
function invalidateWorkspace() {
  const root = process.cwd() + "/";
  vitest.invalidates.add(GUARD);
  for (const p of projects()) {
    const graph = p && (p.vite || p.server) && (p.vite || p.server).moduleGraph;
    if (!graph || !graph.idToModuleMap) continue;
    for (const id of graph.idToModuleMap.keys()) if (id.startsWith(root) && !id.includes("/node_modules/")) vitest.invalidates.add(id.replace(/[?#].*$/, ""));
  }
}
async function collects(file) {
  const p = project();
  try {
    if (typeof p.matchesTestGlob === "function") return p.matchesTestGlob(file);
    if (typeof p.isTargetFile === "function") return await p.isTargetFile(file);
  } catch {}
  return true;
}
async function runOne(file) {
  if (typeof vitest.runTestFiles === "function") return vitest.runTestFiles([file]);
  const p = project();
  if (typeof vitest.runTestSpecifications === "function") return vitest.runTestSpecifications([p.createSpecification(file)]);
  const spec = typeof p.createSpecification === "function" ? p.createSpecification(file) : typeof p.createSpec === "function" ? p.createSpec(file, pool) : [p, file];
  return vitest.runFiles([spec], false);
}
const state = (t) => (t && t.result ? t.result.state : undefined);
say({ ready: true, pool, reuse });
/** One run of the file as it is written now; its results. */
async function runFile(file, content) {
  writeFileSync(file, reuse ? guarded(content) : content);
  if (RECORD) writeFileSync(RECORD, "");
  if (reuse) {
    invalidateWorkspace();
    onWorker++;
  }
  let result, failure;
  try { result = await runOne(file); } catch (e) { failure = e; }
  // This file's results: a run's result may list every module the runner has run.
  const mod = result && result.testModules && result.testModules.find((m) => m.moduleId === file);
  const f = vitest.state.getFiles([file])[0] || (mod && mod.task);
  const tests = [];
  let timedOut = false;
  const walk = (t) => {
    for (const c of t.tasks || []) {
      if (c.type === "suite") walk(c);
      else {
        const errors = (c.result && c.result.errors) || [];
        if (errors.some((e) => /timed out/i.test(String(e && e.message)))) timedOut = true;
        tests.push({ title: c.name, status: state(c) === "pass" ? "passed" : state(c) === "fail" ? "failed" : "skipped", failureMessages: errors.map(msg) });
      }
    }
  };
  if (!f && failure) throw failure;
  if (f) walk(f);
  // A test that timed out may still be running in the kept thread: the next file gets a new one.
  if (reuse && timedOut) await renew();
  return { f, tests };
}
for await (const line of createInterface({ input: process.stdin })) {
  let req;
  try { req = JSON.parse(line); } catch { continue; }
  const { id, file, content } = req;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
    if (!(await collects(file))) {
      say({ id, collected: false });
      continue;
    }
    let { f, tests } = await runFile(file, content);
    const loadError = f && tests.length === 0 && state(f) === "fail" ? ((f.result && f.result.errors) || []).map(msg).join("\\n") : "";
    if (restore.length > 0 && /self-register|context.aware|not supported in workers|worker_threads|ERR_WORKER/i.test(loadError)) {
      // A file that does not load in a thread (a native addon, process.chdir at import) may load in
      // the workspace's own pool: that pool from here on, and this file once more.
      restore.splice(0).forEach((r) => r());
      pool = String(vitest.config.pool);
      reuse = false;
      ({ f, tests } = await runFile(file, content));
    }
    let records = "";
    try { if (RECORD) records = readFileSync(RECORD, "utf8"); } catch {}
    say({ id, collected: true, found: !!f, pool, status: state(f) === "fail" ? "failed" : "passed", message: ((f && f.result && f.result.errors) || []).map((e) => String((e && e.message) || e).slice(0, 4000)).join("\\n"), tests, records });
  } catch (e) {
    say({ id, error: msg(e) });
  } finally {
    try { rmSync(file, { force: true }); } catch {}
  }
}
`;

/** What the runner answered for one file. */
export interface WarmAnswer {
  collected: boolean;
  /** The file's results: failed with a message when it did not load. */
  file?: { status: "passed" | "failed"; message: string };
  tests: { title: string; status: "passed" | "failed" | "skipped"; failureMessages: string[] }[];
  /** What `__agencyRecord` wrote (NDJSON). */
  records: string;
}

export type WarmResult =
  | { outcome: "ran"; answer: WarmAnswer; ms: number; started: boolean }
  | { outcome: "timeout" | "cancelled" | "error"; message: string; ms: number; started: boolean };

interface Warm {
  key: string;
  /** The workspace's real path: where the sandbox mounts it. */
  root: string;
  fingerprint: string;
  writable: string[];
  proc: WorkspaceProcess;
  mark: string;
  ready: Promise<string | undefined>;
  waiting: Map<number, (a: Record<string, unknown>) => void>;
  files: number;
  queue: Promise<unknown>;
  idle?: NodeJS.Timeout;
  dead: boolean;
}

const warm = new Map<string, Warm>();
/** Workspaces whose runner could not start, by fingerprint: not retried until something changes. */
const unable = new Map<string, { fingerprint: string; why: string }>();
let nextId = 1;
let startsCount = 0;

/** Runners started by this process (a test reads it to tell a warm answer from a cold one). */
export function warmStarts(): number {
  return startsCount;
}

/**
 * A fingerprint of the workspace's files as the runner would load them: each file's path, size and
 * modification time (dot-directories, node_modules and test files left out: nothing
 * imports a test file), and node_modules itself with its lock file, so that an install restarts the runner too.
 */
export function workspaceFingerprint(root: string): string {
  const h = createHash("sha256");
  let seen = 0;
  const walk = (dir: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const n of names) {
      if (seen++ >= MAX_FINGERPRINT_ENTRIES) return;
      if (n.startsWith(".") || n === "node_modules") continue;
      const p = join(dir, n);
      let st;
      try {
        st = lstatSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        h.update(`${p}/\0`);
        walk(p);
      } else if (!TEST_FILE.test(n)) h.update(`${p}\0${st.size}\0${st.mtimeMs}\0`);
    }
  };
  walk(root);
  for (const p of [join(root, "node_modules"), join(root, "node_modules", ".package-lock.json")]) {
    try {
      const st = lstatSync(p);
      h.update(`${p}\0${st.mtimeMs}\0`);
    } catch {
      // not installed
    }
  }
  return h.digest("hex");
}

function stop(w: Warm, why: "cancelled" = "cancelled"): void {
  if (w.dead) return;
  w.dead = true;
  if (w.idle) clearTimeout(w.idle);
  if (warm.get(w.key) === w) warm.delete(w.key);
  w.proc.kill(why);
  for (const [, resolve] of w.waiting) resolve({ error: "the runner stopped" });
  w.waiting.clear();
}

/** Stop every warm runner (tests; the agent's shutdown). */
export function stopWarmRunners(): void {
  for (const w of [...warm.values()]) stop(w);
}

function touch(w: Warm): void {
  if (w.idle) clearTimeout(w.idle);
  w.idle = setTimeout(() => stop(w), WARM_IDLE_MS);
  w.idle.unref();
  warm.delete(w.key);
  warm.set(w.key, w);
}

/**
 * The agent's own node for a test runner in the sandbox: its folder, mounted read-only, and a quiet
 * runner's environment with that node first on PATH (a runner's `#!/usr/bin/env node` finds it).
 */
export function runnerNode(extraEnv: Record<string, string>): { dir: string; env: Record<string, string> } {
  const nodeBin = dirname(process.execPath);
  return {
    dir: nodeBin.endsWith("/bin") ? dirname(nodeBin) : nodeBin,
    env: {
      PATH: `${nodeBin}:/usr/local/bin:/usr/bin:/bin`,
      CI: "1",
      NODE_ENV: "test",
      FORCE_COLOR: "0",
      NO_COLOR: "1",
      ...extraEnv,
    },
  };
}

async function start(root: string, fingerprint: string, writable: string[]): Promise<Warm | string> {
  const mark = `__AGENCY_WARM_${randomBytes(8).toString("hex")}__`;
  const node = runnerNode({
    AGENCY_WARM_MARK: mark,
    AGENCY_WARM_TEST_TIMEOUT: String(TEST_TIMEOUT_MS),
    AGENCY_TESTGEN_RECORD: RECORD_FILE,
    AGENCY_WARM_POOL: envString("AIP_TESTGEN_WARM_POOL") === "own" ? "own" : "auto",
  });
  let modules: string | undefined;
  try {
    const real = realpathSync(join(root, "node_modules"));
    if (!real.startsWith(`${realpathSync(root)}/`)) modules = real;
  } catch {
    modules = undefined;
  }
  const proc = await startWorkspaceProcess({
    workspaceRoot: root,
    argv: [process.execPath, "--input-type=module", "-e", DRIVER],
    readOnlyPaths: [node.dir, ...(modules ? [modules] : [])],
    writable,
    env: node.env,
    cpuLimitMs: WARM_CPU_LIMIT_MS,
  });
  if ("status" in proc) return `${proc.reason} (${proc.hint})`;
  startsCount++;
  const key = root;
  const waiting = new Map<number, (a: Record<string, unknown>) => void>();
  let readyDone: (why: string | undefined) => void = () => undefined;
  const ready = new Promise<string | undefined>((r) => (readyDone = r));
  const w: Warm = {
    key,
    root: realpathSync(root),
    fingerprint,
    writable,
    proc,
    mark,
    ready,
    waiting,
    files: 0,
    queue: ready,
    dead: false,
  };
  proc.onLine((line) => {
    if (!line.startsWith(mark)) return;
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line.slice(mark.length)) as Record<string, unknown>;
    } catch {
      return;
    }
    if (msg.ready === true) readyDone(undefined);
    else if (typeof msg.fatal === "string") readyDone(msg.fatal.split("\n")[0]!.slice(0, 300));
    else if (typeof msg.id === "number") {
      const resolve = waiting.get(msg.id);
      waiting.delete(msg.id);
      resolve?.(msg);
    }
  });
  void proc.ended.then((e) => {
    const why = e.killed
      ? `the runner was killed (${e.killed})`
      : `the runner exited (${e.code ?? e.signal}): ${proc.stderrTail().trim().split("\n").pop() ?? ""}`;
    readyDone(why);
    w.dead = true;
    if (warm.get(key) === w) warm.delete(key);
    for (const [, resolve] of waiting) resolve({ error: why });
    waiting.clear();
  });
  const timer = setTimeout(
    () => readyDone(`the runner did not start within ${WARM_START_TIMEOUT_MS} ms`),
    WARM_START_TIMEOUT_MS,
  );
  const why = await ready;
  clearTimeout(timer);
  if (why !== undefined) {
    stop(w);
    return why;
  }
  warm.set(key, w);
  while (warm.size > MAX_WARM_RUNNERS) stop(warm.values().next().value!);
  touch(w);
  return w;
}

/**
 * Run `content` as the file `testPath` (root-relative) in the workspace's warm vitest, starting or
 * restarting it as needed (see the module comment). undefined: no warm runner can serve this
 * workspace (the reason is remembered until the workspace changes); run the file the cold way.
 * Call only for a trusted workspace.
 */
export async function runWarm(
  root: string,
  testPath: string,
  content: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<WarmResult | undefined> {
  const t0 = Date.now();
  // An untrusted workspace is the cold path's to refuse (with its hint); nothing is remembered for it.
  if (!workspaceTrust(root).trusted) return undefined;
  const fingerprint = workspaceFingerprint(root);
  const failed = unable.get(root);
  if (failed && failed.fingerprint === fingerprint) return undefined;
  const dir = posix.dirname(testPath);
  let w = warm.get(root);
  if (w && (w.fingerprint !== fingerprint || w.files >= WARM_MAX_FILES || !w.writable.includes(dir))) {
    const writable = w.writable.includes(dir) ? w.writable : [...w.writable, dir];
    stop(w);
    w = undefined;
    if (writable.length <= MAX_WRITABLE_DIRS)
      return runWarmOn(root, fingerprint, writable, testPath, content, timeoutMs, t0, signal);
  }
  if (!w) return runWarmOn(root, fingerprint, [dir], testPath, content, timeoutMs, t0, signal);
  return ask(w, testPath, content, timeoutMs, t0, false, signal);
}

async function runWarmOn(
  root: string,
  fingerprint: string,
  writable: string[],
  testPath: string,
  content: string,
  timeoutMs: number,
  t0: number,
  signal?: AbortSignal,
): Promise<WarmResult | undefined> {
  const w = await start(root, fingerprint, writable);
  if (typeof w === "string") {
    unable.set(root, { fingerprint, why: w });
    return undefined;
  }
  unable.delete(root);
  return ask(w, testPath, content, timeoutMs - (Date.now() - t0), t0, true, signal);
}

/** One file through the runner, after the files before it; the runner is stopped when it does not answer in time. */
function ask(
  w: Warm,
  testPath: string,
  content: string,
  timeoutMs: number,
  t0: number,
  started: boolean,
  signal?: AbortSignal,
): Promise<WarmResult> {
  const run = w.queue.then(
    () =>
      new Promise<WarmResult>((done) => {
        const ms = (): number => Date.now() - t0;
        if (w.dead) return done({ outcome: "error", message: "the runner stopped", ms: ms(), started });
        if (signal?.aborted) return done({ outcome: "cancelled", message: "cancelled", ms: ms(), started });
        const left = timeoutMs - ms();
        if (left <= 0)
          return done({
            outcome: "timeout",
            message: `the vitest run did not finish in ${timeoutMs} ms`,
            ms: ms(),
            started,
          });
        const id = nextId++;
        w.files++;
        touch(w);
        const onAbort = (): void => {
          w.waiting.delete(id);
          stop(w);
          done({ outcome: "cancelled", message: "cancelled", ms: ms(), started });
        };
        const timer = setTimeout(() => {
          // Answered here, not by the stopped runner's "stopped".
          w.waiting.delete(id);
          stop(w);
          done({
            outcome: "timeout",
            message: `the vitest run did not finish in ${timeoutMs} ms: killed`,
            ms: ms(),
            started,
          });
        }, left);
        signal?.addEventListener("abort", onAbort, { once: true });
        w.waiting.set(id, (a) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          if (typeof a.error === "string")
            return done({ outcome: "error", message: a.error.split("\n")[0]!.slice(0, 300), ms: ms(), started });
          const tests = Array.isArray(a.tests) ? (a.tests as WarmAnswer["tests"]) : [];
          done({
            outcome: "ran",
            answer: {
              collected: a.collected === true,
              ...(a.found === true
                ? { file: { status: a.status === "failed" ? "failed" : "passed", message: String(a.message ?? "") } }
                : {}),
              tests,
              records: typeof a.records === "string" ? a.records : "",
            },
            ms: ms(),
            started,
          });
        });
        w.proc.stdin.write(`${JSON.stringify({ id, file: join(w.root, testPath), content })}\n`);
      }),
  );
  w.queue = run.catch(() => undefined);
  return run;
}
