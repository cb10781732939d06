/**
 * Checking a generated test (docs/agents.md, "testgen"): typechecked in-process with the TypeScript API
 * against the workspace (its tsconfig through loadProject, or defaults), then, when the workspace is
 * trusted (docs/security.md, "Workspace trust") and has vitest or jest installed, run by that runner
 * inside the workspace sandbox with a timeout. Nothing of the workspace runs inside the agent, and
 * nothing of an untrusted workspace runs at all. Workspace files are read through the race-free reader (readContainedSync); declaration
 * files and package.json under the workspace's node_modules may resolve outside it (pnpm, npm link):
 * those are read as data, never run.
 */
import { createHash, randomBytes } from "node:crypto";
import { constants, existsSync, realpathSync, statSync } from "node:fs";
import { access } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import type * as TS from "typescript";
import { ts } from "../lib/code/typescript.js";
import { envFlag } from "../../protocol/util/env.js";
import { isInside } from "../../protocol/util/paths.js";
import { refuseWorkspaceRoot, workspaceRootsFromEnv } from "../../protocol/util/workspace-roots.js";
import { loadProject } from "../lib/code/project.js";
import { readContainedSync } from "../lib/code/workspace.js";
import { TextMemo } from "../lib/memo.js";
import { OUTPUT_DIR, runWorkspaceCode } from "../lib/sandbox/workspace-run.js";
import { runWarm, runnerNode, type WarmAnswer } from "./warm.js";

/** Test runs take at most this long unless `constraints.run_timeout_ms` says otherwise (the request deadline caps both). */
export const DEFAULT_RUN_TIMEOUT_MS = 20_000;
/** Workspaces whose programs are kept for reuse (least recently used dropped). */
const MAX_CACHED_WORKSPACES = 4;
/** Diagnostics reported per failing test. */
const MAX_REASON_CHARS = 200;

let libDir: string | undefined;
/** The compiler's lib directory (asked on first use: the compiler loads after the agent is ready). */
function tsLibDir(): string {
  return (libDir ??= dirname(ts.getDefaultLibFilePath({})));
}

/** A workspace (or a lone buffer) as the checker sees it: options, root files, and a host over its files. */
export interface CheckProject {
  root: string;
  options: TS.CompilerOptions;
  fileNames: string[];
  fallback: string[];
  /** In-memory files (the request's buffer, the generated test, framework stubs). */
  overlay: Map<string, string>;
  /** Parsed files kept between requests (path → text + SourceFile). */
  parsed: Map<string, { text: string; sf: TS.SourceFile }>;
  program?: TS.Program;
  /**
   * Files every program of this request has among its roots (the source and the test): the programs
   * of a request, and of the requests after it, then have the same roots and share their structure.
   */
  roots: string[];
  /** Where the last program is kept for the next request on this workspace. */
  kept: Kept;
}

/** What is kept of a workspace between requests: parsed files and the last program (for structure reuse). */
interface Kept {
  parsed: Map<string, { text: string; sf: TS.SourceFile }>;
  program?: TS.Program;
  /** Workspace files as last read, by path, with their stamp (see readFor). */
  texts: Map<string, { stamp: string; text: string }>;
  /** The options the kept program was built with (as JSON). */
  options?: string;
  /** The last generated content checked per test file: what stands in for it before this request's is known. */
  tests: Map<string, string>;
  /**
   * Framework stubs the last check beside a test needed (see typecheckNow), with the files of the
   * program that showed it: while a program has those files, the stub is among its roots from the start.
   */
  stubs: Map<string, string>;
}
const cache = new Map<string, Kept>();
/** Parsed files kept per workspace beyond this many are forgotten (all at once). */
const MAX_PARSED = 10_000;
/** Typecheck results of lone buffers (a pure function of the buffer, the test and the framework). */
const bufferChecks = new TextMemo<TypecheckResult>(64);
const BUFFER_ROOT = "/__agency_buffer__";

/** TypeScript's own lib files, parsed once per process (by path and language version). */
const libFiles = new Map<string, TS.SourceFile>();

function isDeclarationOrManifest(p: string): boolean {
  return /\.d\.[cm]?ts$/.test(p) || p.endsWith("/package.json");
}

/**
 * What identifies a file's content on disk (device, inode, size, modification and change times), or
 * undefined when it is not a plain file: the same stamp is the same file, unchanged.
 */
function stampOf(path: string): string | undefined {
  try {
    const st = statSync(path, { bigint: true });
    return st.isFile() ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Read a file for the compiler: overlay, TypeScript's lib files, workspace files through the contained
 * reader. A workspace file read before and unchanged since (its stamp) is answered from memory.
 */
function readFor(project: CheckProject, path: string): string | undefined {
  const o = project.overlay.get(path);
  if (o !== undefined) return o;
  if (path.startsWith(tsLibDir() + sep)) return ts.sys.readFile(path);
  return readWorkspaceText(project, path);
}

/** A workspace file as it is on disk (never the overlay), from memory while its stamp is unchanged. */
export function readWorkspaceText(project: CheckProject, path: string): string | undefined {
  if (!isInside(project.root, path)) return undefined;
  const texts = project.kept.texts;
  // Taken before the read: a change during the read leaves a stamp that no longer matches.
  const stamp = stampOf(path);
  const hit = texts.get(path);
  if (stamp !== undefined && hit?.stamp === stamp) return hit.text;
  const text = readFromDisk(project, path);
  if (text !== undefined && stamp !== undefined) texts.set(path, { stamp, text });
  else texts.delete(path);
  return text;
}

function readFromDisk(project: CheckProject, path: string): string | undefined {
  const text = readContainedSync(project.root, path);
  if (text !== undefined) return text;
  // A declaration file under the workspace's node_modules that resolves elsewhere (a symlinked package):
  // read only inside an allowed workspace root, with the same reader (no FIFO or device, the size cap).
  if (path.includes(`${sep}node_modules${sep}`) && isDeclarationOrManifest(path)) {
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      return undefined;
    }
    if (!isDeclarationOrManifest(real)) return undefined;
    const allowed = allowedRootOf(real);
    return allowed === undefined ? undefined : readContainedSync(allowed, real);
  }
  return undefined;
}

/** The (real) allowed workspace root that holds `real`, when `real` may be read at all. */
function allowedRootOf(real: string): string | undefined {
  const allowed = workspaceRootsFromEnv();
  if (refuseWorkspaceRoot(real, allowed) !== undefined) return undefined;
  for (const r of allowed) {
    try {
      const rr = realpathSync(r);
      if (isInside(rr, real)) return rr;
    } catch {
      // a configured root that does not exist
    }
  }
  return undefined;
}

function hostFor(project: CheckProject): TS.CompilerHost {
  const base = ts.createCompilerHost(project.options, true);
  const exists = (p: string): boolean =>
    project.overlay.has(p) ||
    (p.startsWith(tsLibDir() + sep) ? ts.sys.fileExists(p) : isInside(project.root, p) && existsSync(p));
  return {
    ...base,
    fileExists: exists,
    readFile: (p) => readFor(project, p),
    directoryExists: (d) =>
      d.startsWith(tsLibDir()) || isInside(project.root, d) || [...project.overlay.keys()].some((k) => k.startsWith(d))
        ? (ts.sys.directoryExists?.(d) ?? false) || [...project.overlay.keys()].some((k) => k.startsWith(d + sep))
        : false,
    getCurrentDirectory: () => project.root,
    // Paths stay as the workspace names them: a symlinked package is read under node_modules (see readFor).
    realpath: (p) => p,
    getSourceFile: (fileName, languageVersion) => {
      const version = typeof languageVersion === "object" ? languageVersion.languageVersion : languageVersion;
      if (fileName.startsWith(tsLibDir() + sep)) {
        const key = `${fileName}|${version}`;
        let sf = libFiles.get(key);
        if (!sf) {
          const text = ts.sys.readFile(fileName);
          if (text === undefined) return undefined;
          libFiles.set(key, (sf = ts.createSourceFile(fileName, text, languageVersion, true)));
        }
        return sf;
      }
      const text = readFor(project, fileName);
      if (text === undefined) return undefined;
      const hit = project.parsed.get(fileName);
      if (hit && hit.text === text) return hit.sf;
      const sf = ts.createSourceFile(fileName, text, languageVersion, true);
      project.parsed.set(fileName, { text, sf });
      return sf;
    },
    writeFile: () => undefined,
  };
}

function keptFor(key: string): Kept {
  let kept = cache.get(key);
  if (kept) cache.delete(key);
  else kept = { parsed: new Map(), texts: new Map(), tests: new Map(), stubs: new Map() };
  if (kept.parsed.size > MAX_PARSED) kept.parsed.clear();
  if (kept.texts.size > MAX_PARSED) kept.texts.clear();
  cache.set(key, kept);
  while (cache.size > MAX_CACHED_WORKSPACES) cache.delete(cache.keys().next().value!);
  return kept;
}

/**
 * The project of a workspace root, or of a lone buffer under a virtual root. Each request gets its own
 * (its overlay is its own); parsed files and the last program are shared per workspace.
 */
export async function checkProject(root: string | undefined): Promise<CheckProject> {
  if (root === undefined) {
    const kept = keptFor(BUFFER_ROOT);
    return {
      root: BUFFER_ROOT,
      options: {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        // A lone buffer gets the language's lib only: no DOM, no @types (they are the workspace's to choose).
        lib: ["lib.es2022.d.ts"],
        types: [],
      },
      fileNames: [],
      fallback: ["no workspace_root: the buffer is checked alone, with default options"],
      overlay: new Map(),
      parsed: kept.parsed,
      ...(kept.program ? { program: kept.program } : {}),
      roots: [],
      kept,
    };
  }
  const loaded = await loadProject(root);
  const kept = keptFor(root);
  return {
    root,
    options: {
      // Unless the workspace's tsconfig asks for lib replacement packages (@typescript/lib-*), the
      // compiler's own lib files: otherwise every program built afresh looks for them in node_modules.
      libReplacement: false,
      ...loaded.options,
      noEmit: true,
      noUnusedLocals: false,
      noUnusedParameters: false,
    },
    fileNames: loaded.fileNames,
    fallback: loaded.fallback,
    overlay: new Map(),
    parsed: kept.parsed,
    ...(kept.program ? { program: kept.program } : {}),
    roots: [],
    kept,
  };
}

/**
 * A program over the request's roots, `extra`, and the project's declaration files (global
 * declarations are not imported), reusing the previous one's structure. The rest of the project comes
 * in only as far as imports reach. When no file changed since the previous program, that program is
 * answered again, with its type checker and all it has computed.
 */
export function buildProgram(project: CheckProject, extra: string[]): TS.Program {
  const roots = [...new Set([...project.roots, ...extra, ...project.fileNames.filter((f) => /\.d\.[cm]?ts$/.test(f))])];
  const options = JSON.stringify(project.options);
  const old = project.program;
  const program = ts.createProgram({
    rootNames: roots,
    options: project.options,
    host: hostFor(project),
    ...(old ? { oldProgram: old } : {}),
  });
  if (old && project.kept.options === options && sameProgram(old, program, roots)) return old;
  project.program = program;
  project.kept.program = program;
  project.kept.options = options;
  return program;
}

/** Whether `next` has the roots and the very same source files (parsed once, see hostFor) as `old`. */
function sameProgram(old: TS.Program, next: TS.Program, roots: string[]): boolean {
  const oldRoots = old.getRootFileNames();
  if (oldRoots.length !== roots.length || oldRoots.some((r, i) => r !== roots[i])) return false;
  const files = next.getSourceFiles();
  if (files.length !== old.getSourceFiles().length) return false;
  return files.every((sf) => old.getSourceFile(sf.fileName) === sf);
}

/** Generated contents remembered per workspace (the last one per test file). */
const MAX_KEPT_TESTS = 64;

/**
 * Before this request's test is known: the test file as the last request checked it (or an empty
 * module), so that the program built now has the roots, and mostly the files, of the one the test's
 * check builds next.
 */
export function standInForTest(project: CheckProject, testFile: string, framework?: string): void {
  if (!project.roots.includes(testFile)) project.roots.push(testFile);
  if (!project.overlay.has(testFile)) project.overlay.set(testFile, project.kept.tests.get(testFile) ?? "export {};\n");
  // The framework's stub, when the last check here needed it: the programs keep the same roots.
  if (framework !== undefined) {
    const stub = stubPathFor(testFile, framework);
    if (project.kept.stubs.has(stub)) addStub(project, stub, framework);
  }
}

export interface TypecheckResult {
  /** Diagnostics of the test file: line (1-based) and message. */
  errors: { line: number; code: number; message: string }[];
  /** Set when the framework's own types were missing and a stub stood in. */
  stub?: string;
}

const FRAMEWORK_STUBS: Record<string, string> = {
  vitest:
    'declare module "vitest" { export const describe: any; export const it: any; export const test: any; export const expect: any; }\n',
  jest: "declare const describe: any; declare const it: any; declare const test: any; declare const expect: any;\n",
  "node:test":
    'declare module "node:test" { export const describe: any; export const it: any; }\ndeclare module "node:assert/strict" { const assert: any; export default assert; }\n',
};

function errorsOf(program: TS.Program, file: string): TypecheckResult["errors"] {
  const sf = program.getSourceFile(file);
  if (!sf) return [{ line: 1, code: 0, message: "the test file was not part of the program" }];
  return [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]
    .filter((d) => d.category === ts.DiagnosticCategory.Error)
    .map((d) => ({
      line: d.start !== undefined ? sf.getLineAndCharacterOfPosition(d.start).line + 1 : 1,
      code: d.code,
      message: `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`.slice(0, MAX_REASON_CHARS),
    }));
}

/** Whether an error says the test framework's types are missing (the module, or its globals). */
function frameworkMissing(e: TypecheckResult["errors"][number], framework: string): boolean {
  if (e.code === 2307 || e.code === 2792 || e.code === 7016)
    return e.message.includes(`'${framework === "node:test" ? "node:" : framework}`);
  return (e.code === 2582 || e.code === 2304) && /'(describe|it|test|expect)'/.test(e.message);
}

/** Typecheck `content` as the file `testFile` (absolute) in the project; with a framework stub when its types are missing. */
export function typecheck(
  project: CheckProject,
  testFile: string,
  content: string,
  framework: string,
): TypecheckResult {
  project.overlay.set(testFile, content);
  project.kept.tests.delete(testFile);
  project.kept.tests.set(testFile, content);
  while (project.kept.tests.size > MAX_KEPT_TESTS) project.kept.tests.delete(project.kept.tests.keys().next().value!);
  if (project.root === BUFFER_ROOT) {
    const key = [framework, ...[...project.overlay].sort().flat()].join("\0");
    return bufferChecks.get(key, () => typecheckNow(project, testFile, framework));
  }
  return typecheckNow(project, testFile, framework);
}

/** Where the stub for `framework`'s types stands beside a test file. */
function stubPathFor(testFile: string, framework: string): string {
  return join(dirname(testFile), `__agency_${framework.replace(/\W/g, "_")}_stub.d.ts`);
}

function addStub(project: CheckProject, stubPath: string, framework: string): void {
  project.overlay.set(stubPath, FRAMEWORK_STUBS[framework] ?? "");
  if (!project.roots.includes(stubPath)) project.roots.push(stubPath);
}

function removeStub(project: CheckProject, stubPath: string): void {
  project.overlay.delete(stubPath);
  project.roots = project.roots.filter((r) => r !== stubPath);
}

/** The files of a program, as a digest (a stub's verdict holds while they are the same). */
function filesOf(program: TS.Program): string {
  const hash = createHash("sha256");
  for (const sf of program.getSourceFiles()) hash.update(`${sf.fileName}\0`);
  return hash.digest("base64");
}

/**
 * Whether the framework's module now resolves to types from the test file. The stub's own
 * `declare module` would hide it: the compiler does not resolve again an unchanged file's import that
 * an ambient module answers, so a module installed since would not change the program's files.
 */
function resolvesTyped(project: CheckProject, program: TS.Program, testFile: string, framework: string): boolean {
  if (framework !== "vitest") return false;
  const mode = program.getSourceFile(testFile)?.impliedNodeFormat;
  const { resolvedModule } = ts.resolveModuleName(
    framework,
    testFile,
    project.options,
    hostFor(project),
    undefined,
    undefined,
    mode,
  );
  return resolvedModule !== undefined && /\.(d\.[cm]?ts|[cm]?tsx?)$/.test(resolvedModule.resolvedFileName);
}

function typecheckNow(project: CheckProject, testFile: string, framework: string): TypecheckResult {
  const stubPath = stubPathFor(testFile, framework);
  const stubbed = {
    stub: `the workspace does not have ${framework}'s types installed: checked against an untyped stub`,
  };
  // The last check here needed the stub, and standInForTest put it among the roots: while the program
  // has the same files (no framework types installed since), one program checks the test, and when
  // nothing changed it is the very one the request's earlier steps built, checker and all.
  const verdict = project.kept.stubs.get(stubPath);
  if (verdict !== undefined && project.overlay.has(stubPath)) {
    const program = buildProgram(project, [testFile]);
    if (filesOf(program) === verdict && !resolvesTyped(project, program, testFile, framework))
      return { errors: errorsOf(program, testFile), ...stubbed };
  }
  removeStub(project, stubPath);
  project.kept.stubs.delete(stubPath);
  let program = buildProgram(project, [testFile]);
  let errors = errorsOf(program, testFile);
  if (errors.some((e) => frameworkMissing(e, framework))) {
    addStub(project, stubPath, framework);
    program = buildProgram(project, [testFile]);
    errors = errorsOf(program, testFile);
    project.kept.stubs.set(stubPath, filesOf(program));
    while (project.kept.stubs.size > MAX_KEPT_TESTS) project.kept.stubs.delete(project.kept.stubs.keys().next().value!);
    return { errors, ...stubbed };
  }
  return { errors };
}

export type Runner = "vitest" | "jest";

/** The workspace's own runner for the framework, when installed (`node_modules/.bin/<runner>`). */
export async function findRunner(root: string | undefined, framework: string): Promise<Runner | undefined> {
  if (root === undefined || (framework !== "vitest" && framework !== "jest")) return undefined;
  try {
    await access(join(root, "node_modules", ".bin", framework), constants.X_OK);
    return framework;
  } catch {
    return undefined;
  }
}

export interface TestOutcome {
  title: string;
  status: "passed" | "failed" | "skipped";
  message?: string;
}

/** What a recording run saw a case's `result` be: JSON when it is plain data, or undefined. */
export interface Recorded {
  undefined: boolean;
  json?: string;
}

export interface RunResult {
  outcome: "ran" | "timeout" | "load-error" | "not-collected" | "error";
  tests: TestOutcome[];
  /** Values recorded by `__agencyRecord` (see RECORDER), by test title. */
  records: Map<string, Recorded>;
  /** Why the file did not run (a load error, the timeout, the runner's own failure). */
  message?: string;
  ms: number;
}

/** Whether generated files go to the workspace's warm runner (warm.ts); AIP_TESTGEN_WARM=0 turns it off. */
export function warmEnabled(): boolean {
  return envFlag("AIP_TESTGEN_WARM", process.env, true);
}

/** The recorder's lines (see RECORDER) by test title. */
export function parseRecords(text: string): Map<string, Recorded> {
  const records = new Map<string, Recorded>();
  for (const line of text.split("\n")) {
    if (!line) continue;
    try {
      const r = JSON.parse(line) as { title: string; undefined: boolean; json?: string };
      records.set(r.title, { undefined: r.undefined, ...(typeof r.json === "string" ? { json: r.json } : {}) });
    } catch {
      // a line cut short
    }
  }
  return records;
}

/** A warm runner's answer as a run's result (the same outcomes as the cold run's report). */
function fromWarm(a: WarmAnswer, testPath: string, ms: number): RunResult {
  const records = parseRecords(a.records);
  if (!a.collected || !a.file)
    return {
      outcome: "not-collected",
      tests: [],
      records,
      message: `the workspace's vitest configuration does not collect ${testPath}`,
      ms,
    };
  if (a.tests.length === 0 && a.file.status === "failed")
    return { outcome: "load-error", tests: [], records, message: failureLine(a.file.message), ms };
  return {
    outcome: "ran",
    tests: a.tests.map((t) => ({
      title: t.title,
      status: t.status,
      ...(t.status === "failed" ? { message: failureLine(t.failureMessages.join("\n")) } : {}),
    })),
    records,
    ms,
  };
}

interface JsonReport {
  testResults?: {
    status?: string;
    message?: string;
    failureMessage?: string;
    assertionResults?: { title: string; status: string; failureMessages?: string[] }[];
  }[];
}

/**
 * The first line of a runner's failure, ANSI colours removed; a line that only introduces what follows
 * ("Transform failed with 1 error:") is joined with the next one, which says what failed.
 */
export function failureLine(s: string | undefined): string {
  // eslint-disable-next-line no-control-regex
  const clean = (s ?? "").replace(/\u001b\[[0-9;]*m/g, "");
  const lines = clean
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  let line = lines[0] ?? "";
  if (line.endsWith(":") && lines[1] !== undefined) line = `${line} ${lines[1]}`;
  return line.slice(0, MAX_REASON_CHARS);
}

/**
 * Put into a recording run's test file: `__agencyRecord(title, result)` appends what the case returned to
 * the file named by AGENCY_TESTGEN_RECORD (a temp file of the agent's), as JSON when it is plain data
 * (finite numbers, strings, booleans, null, arrays and plain objects of those without symbol keys, at most 1,000
 * characters).
 */
export const RECORDER = `import { appendFileSync as __agencyAppend } from "node:fs";
function __agencyRecord(title, value) {
  const out = process.env.AGENCY_TESTGEN_RECORD;
  if (!out) return;
  const plain = (v, d) =>
    v === null || typeof v === "string" || typeof v === "boolean" ||
    (typeof v === "number" && Number.isFinite(v) && !Object.is(v, -0)) ||
    (d < 5 && Array.isArray(v) && v.every((x) => plain(x, d + 1))) ||
    (d < 5 && typeof v === "object" && !Array.isArray(v) &&
      (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null) &&
      Object.getOwnPropertySymbols(v).length === 0 &&
      Object.values(v).every((x) => x === undefined || plain(x, d + 1)));
  let json;
  if (value !== undefined && plain(value, 0)) json = JSON.stringify(value);
  if (json !== undefined && json.length > 1000) json = undefined;
  __agencyAppend(out, JSON.stringify({ title, undefined: value === undefined, json }) + "\\n");
}
`;

/**
 * Run `content` with the workspace's runner, in the workspace sandbox (agents/lib/sandbox): the file
 * is mounted next to where the test will live (so its imports resolve), under a unique name, in the
 * sandbox's private copy of that directory: nothing is written to the workspace. The report and the
 * recorded values come back through the sandbox's output directory. An abort (the request cancelled)
 * or the timeout kills the runner's whole process tree. Call only for a trusted workspace.
 */
export async function runTestFile(
  root: string,
  runner: Runner,
  testPath: string,
  content: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<RunResult> {
  const started = Date.now();
  const finalAbs = resolve(root, testPath);
  if (!isInside(root, finalAbs))
    return { outcome: "error", tests: [], records: new Map(), message: "test_path is outside the workspace", ms: 0 };
  const dir = dirname(finalAbs);
  let existing = dir;
  while (!existsSync(existing)) existing = dirname(existing);
  if (!isInside(realpathSync(root), realpathSync(existing)))
    return {
      outcome: "error",
      tests: [],
      records: new Map(),
      message: "test directory resolves outside the workspace",
      ms: 0,
    };
  const m = /\.test\.([cm]?[jt]sx?)$/.exec(finalAbs);
  const ext = m ? m[1]! : "ts";
  const file = join(
    dir,
    `${finalAbs.slice(dir.length + 1).replace(/\.test\.[cm]?[jt]sx?$/, "")}.agency-${randomBytes(4).toString("hex")}.test.${ext}`,
  );
  const records = new Map<string, Recorded>();
  const rel = relative(root, file);
  if (runner === "vitest" && warmEnabled()) {
    const w = await runWarm(root, rel, content, timeoutMs, signal);
    if (w?.outcome === "ran") return fromWarm(w.answer, testPath, Date.now() - started);
    if (w?.outcome === "timeout")
      return { outcome: "timeout", tests: [], records, message: w.message, ms: Date.now() - started };
    if (w?.outcome === "cancelled")
      return { outcome: "error", tests: [], records, message: "cancelled", ms: Date.now() - started };
    // No warm runner for this workspace, or it stopped under the file: the cold way.
  }
  const report = `${OUTPUT_DIR}/report.json`;
  const args =
    runner === "vitest"
      ? ["run", rel, "--reporter=json", `--outputFile=${report}`, "--watch=false"]
      : ["--runTestsByPath", rel, "--json", `--outputFile=${report}`, "--watchAll=false", "--ci"];
  const node = runnerNode({ AGENCY_TESTGEN_RECORD: `${OUTPUT_DIR}/record.ndjson` });
  const res = await runWorkspaceCode({
    workspaceRoot: root,
    argv: [`./node_modules/.bin/${runner}`, ...args],
    files: { [rel]: content },
    collect: true,
    readOnlyPaths: [node.dir],
    env: node.env,
    timeoutMs,
    ...(signal ? { signal } : {}),
  });
  const ms = Date.now() - started;
  if (res.status === "skipped") return { outcome: "error", tests: [], records, message: res.reason, ms };
  if (res.killed === "timeout" || res.killed === "cpu")
    return {
      outcome: "timeout",
      tests: [],
      records,
      message: `the ${runner} run did not finish in ${timeoutMs} ms: killed`,
      ms,
    };
  if (res.killed !== undefined)
    return {
      outcome: "error",
      tests: [],
      records,
      message:
        res.killed === "memory"
          ? `the ${runner} run went over its memory limit: killed`
          : res.killed === "processes"
            ? `the ${runner} run went over its process limit: killed`
            : "cancelled",
      ms,
    };
  {
    const outputs = res.outputs ?? {};
    let parsed: JsonReport;
    try {
      parsed = JSON.parse(outputs["report.json"] ?? "") as JsonReport;
    } catch {
      const text = `${res.stdout}\n${res.stderr}`;
      if (/No test files? found/i.test(text))
        return {
          outcome: "not-collected",
          tests: [],
          records,
          message: `the workspace's ${runner} configuration does not collect ${testPath}`,
          ms,
        };
      return {
        outcome: "error",
        tests: [],
        records,
        message: `${runner} exited with ${res.exitCode ?? res.signal}: ${failureLine(res.stderr || res.stdout)}`,
        ms,
      };
    }
    for (const [k, v] of parseRecords(outputs["record.ndjson"] ?? "")) records.set(k, v);
    const file0 = parsed.testResults?.[0];
    if (!file0)
      return {
        outcome: "not-collected",
        tests: [],
        records,
        message: `the workspace's ${runner} configuration does not collect ${testPath}`,
        ms,
      };
    const asserts = file0.assertionResults ?? [];
    if (asserts.length === 0 && file0.status === "failed")
      return {
        outcome: "load-error",
        tests: [],
        records,
        message: failureLine(file0.message ?? file0.failureMessage),
        ms,
      };
    return {
      outcome: "ran",
      tests: asserts.map((a) => ({
        title: a.title,
        status: a.status === "passed" ? "passed" : a.status === "failed" ? "failed" : "skipped",
        ...(a.status === "failed" ? { message: failureLine(a.failureMessages?.join("\n")) } : {}),
      })),
      records,
      ms,
    };
  }
}
