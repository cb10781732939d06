/**
 * testgen measured (docs/performance.md, "testgen"): for exported functions and public methods of each
 * project, the agent generates a test in a temporary copy of the project with its own checks on. A
 * corpus project gets its own devDependencies, as a user's workspace has them: `npm install
 * --ignore-scripts` of its package.json (plus vitest when the project has no vitest, so the generated
 * vitest files can run) into a cache under the temp dir, keyed by the package.json, then hard-linked
 * into the copy (inside it, so `extends` of a tsconfig package resolves). This repository and the
 * fixture use this checkout's node_modules. The written files are then judged apart from the agent,
 * with the project's own tools: one program of the project's TypeScript (its tsconfig parsed by that
 * compiler) over the generated files (typecheck %), one run of the project's vitest over all of them
 * (run %: the file loaded, no import or syntax error; pass %: kept tests that pass), and the files'
 * own text (asserting %: at least one value assertion, not `toBeDefined`).
 */
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execa } from "execa";
import ts from "typescript";
import { loadProject } from "../../agents/lib/code/project.js";
import type { HandlerContext } from "../../agents/lib/runtime/types.js";
import { standaloneContext } from "../../agents/lib/runtime/context.js";
import { createTestgen } from "../../agents/testgen/handler.js";
import { failureLine } from "../../agents/testgen/verify.js";
import { createLogger } from "../../protocol/util/log.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { mutateFile, testForMutant, type Mutant } from "./mutants.js";

/** Mutants per tested function, at most. */
const MUTANTS_PER_FUNCTION = 6;

export interface TestgenProject {
  name: string;
  root: string;
  /** Source files (relative). */
  files: string[];
  /** Use this checkout's node_modules (this repository, the fixture) instead of installing the project's devDependencies. */
  checkoutModules?: boolean;
}

/** The vitest added to a project whose devDependencies have none (this checkout's pinned version). */
const ADDED_VITEST = "4.1.12";
/** One project's `npm install` may take this long. */
const INSTALL_TIMEOUT_MS = 15 * 60_000;

/** How a copy got its node_modules, for the report. */
interface Environment {
  node_modules: string;
  vitest?: string;
  typescript?: string;
  added?: string[];
  install_error?: string;
}

/**
 * The project's devDependencies installed once into the cache (`$TMPDIR/agency-eval-cache/<name>-<hash>`,
 * reused while the package.json is unchanged); undefined with the reason when the install failed.
 */
async function installed(p: TestgenProject): Promise<{ dir: string; added: string[] } | { error: string }> {
  const pkg = JSON.parse(readFileSync(join(p.root, "package.json"), "utf8")) as Record<string, unknown>;
  const dev = { ...((pkg.devDependencies as Record<string, string> | undefined) ?? {}) };
  const added: string[] = [];
  if (!dev.vitest) {
    dev.vitest = ADDED_VITEST;
    added.push(`vitest@${ADDED_VITEST}`);
  }
  const manifest = {
    name: `eval-${p.name}`,
    private: true,
    ...(pkg.type ? { type: pkg.type } : {}),
    dependencies: pkg.dependencies ?? {},
    devDependencies: dev,
  };
  const text = `${JSON.stringify(manifest, null, 2)}\n`;
  const cache = join(tmpdir(), "agency-eval-cache");
  const dir = join(cache, `${p.name}-${createHash("sha256").update(text).digest("hex").slice(0, 12)}`);
  const done = join(dir, ".installed");
  if (existsSync(done)) return { dir, added };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), text);
  const res = await execa(
    "npm",
    [
      "install",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--legacy-peer-deps",
      "--loglevel=error",
      `--cache=${join(cache, "npm")}`,
    ],
    { cwd: dir, reject: false, timeout: INSTALL_TIMEOUT_MS, all: true },
  );
  if (res.exitCode !== 0)
    return {
      error: `npm install: ${String(res.all ?? "")
        .split("\n")
        .slice(-3)
        .join(" ")
        .slice(0, 300)}`,
    };
  writeFileSync(done, new Date().toISOString());
  return { dir, added };
}

function versionOf(copy: string, name: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(copy, "node_modules", name, "package.json"), "utf8")) as { version: string })
      .version;
  } catch {
    return undefined;
  }
}

/** node_modules for the copy: the project's own devDependencies, or this checkout's (see the module comment). */
async function provideModules(
  copy: string,
  checkoutModules: string,
  own: Awaited<ReturnType<typeof installed>> | undefined,
): Promise<Environment> {
  let env: Environment;
  if (own && "dir" in own) {
    // Hard links: inside the copy, as an installed workspace's own files are.
    await execa("cp", ["-al", join(own.dir, "node_modules"), join(copy, "node_modules")]);
    env = {
      node_modules: "the project's devDependencies (npm install --ignore-scripts)",
      ...(own.added.length > 0 ? { added: own.added } : {}),
    };
  } else {
    symlinkSync(checkoutModules, join(copy, "node_modules"));
    env = {
      node_modules: "this checkout's (linked)",
      ...(own && "error" in own ? { install_error: own.error } : {}),
    };
  }
  const vitest = versionOf(copy, "vitest");
  const typescript = versionOf(copy, "typescript");
  return { ...env, ...(vitest ? { vitest } : {}), ...(typescript ? { typescript } : {}) };
}

/**
 * The project's own TypeScript (from the copy's node_modules; this checkout's when it has none) and its
 * tsconfig parsed by that compiler; the judge's options are the project's, `noEmit` on.
 */
async function judgeCompiler(copy: string): Promise<{ ts: typeof ts; options: ts.CompilerOptions }> {
  let pts: typeof ts = ts;
  try {
    pts = createRequire(join(copy, "package.json"))("typescript") as typeof ts;
  } catch {
    // this checkout's
  }
  const config = join(copy, "tsconfig.json");
  let options: ts.CompilerOptions;
  const parsed = existsSync(config)
    ? pts.getParsedCommandLineOfConfigFile(config, {}, { ...pts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
    : undefined;
  if (parsed) options = parsed.options;
  else options = (await loadProject(copy)).options;
  options = { ...options, noEmit: true };
  for (const k of ["composite", "incremental", "tsBuildInfoFile", "emitDeclarationOnly", "declaration"])
    delete options[k];
  return { ts: pts, options };
}

const silent = createLogger({ agentName: "eval", destination: false });

function ctx(): HandlerContext {
  return standaloneContext({ traceId: "eval", budgetMs: 120_000, log: silent });
}

/** Exported functions (declared in the file) and public methods of exported classes, as `name` / `Class.method`. */
function targetsOf(root: string, file: string): { name: string; examples: boolean }[] {
  const sf = ts.createSourceFile(file, readFileSync(join(root, file), "utf8"), ts.ScriptTarget.Latest, true);
  const out: { name: string; examples: boolean }[] = [];
  const exported = (n: ts.Node): boolean =>
    ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  // An example that states a result: a result comment (`// =>`, `// →`, `// returns`, …) or a printed call.
  const hasExample = (n: ts.Node): boolean =>
    ts
      .getJSDocTags(n)
      .some(
        (t) =>
          t.tagName.text === "example" &&
          /\/\/\s*(=>|→|->|returns?\b|result|output|prints?\b|["'`\d[{-]|true\b|false\b|null\b|undefined\b)|console\.log\(/i.test(
            typeof t.comment === "string" ? t.comment : (ts.getTextOfJSDocComment(t.comment) ?? ""),
          ),
      );
  const seen = new Set<string>();
  for (const st of sf.statements) {
    if (!exported(st)) continue;
    if (ts.isFunctionDeclaration(st) && st.name && st.body && !seen.has(st.name.text)) {
      seen.add(st.name.text);
      out.push({ name: st.name.text, examples: hasExample(st) });
    } else if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations)
        if (
          ts.isIdentifier(d.name) &&
          d.initializer &&
          (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))
        )
          out.push({ name: d.name.text, examples: hasExample(st) });
    } else if (ts.isClassDeclaration(st) && st.name) {
      for (const m of st.members) {
        if (!ts.isMethodDeclaration(m) || !m.body || !ts.isIdentifier(m.name)) continue;
        const mods = ts.getModifiers(m) ?? [];
        if (mods.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword || x.kind === ts.SyntaxKind.ProtectedKeyword))
          continue;
        out.push({ name: `${st.name.text}.${m.name.text}`, examples: hasExample(m) });
      }
    }
  }
  return out;
}

interface Payload {
  test_path: string;
  content: string;
  tests: { kept: number; value_assertions: number; verdicts: { reason: string }[] };
  checks: { run: string };
}

const VALUE =
  /\b(toBe|toEqual|toStrictEqual|toThrow|toBeUndefined|toBeNull|toBeNaN)\(|assert\.(equal|deepStrictEqual|throws|rejects)\(/;

interface Generated {
  ms: number;
  target: string;
  file: string;
  test_path: string;
  content: string;
  examples: boolean;
  kept: number;
  value_assertions: number;
  raw_typecheck_ok: boolean;
  agent_run: string;
  /** testgen's own stage times (parse, types, observe, check, …). */
  stages: Record<string, number>;
}

/** One project: generate, then judge the written files. `limit` targets at most (spread evenly over the list). */
export async function evalTestgenProject(
  p: TestgenProject,
  checkoutModules: string,
  limit: number,
  own?: Awaited<ReturnType<typeof installed>>,
): Promise<Record<string, unknown>> {
  const copy = mkdtempSync(join(tmpdir(), `eval-testgen-${p.name}-`));
  try {
    for (const f of ["package.json", "tsconfig.json", ...p.files]) {
      if (!existsSync(join(p.root, f))) continue;
      mkdirSync(dirname(join(copy, f)), { recursive: true });
      cpSync(join(p.root, f), join(copy, f));
    }
    const environment = await provideModules(copy, checkoutModules, own);
    const all = p.files.flatMap((f) => targetsOf(copy, f).map((t) => ({ ...t, file: f })));
    const step = Math.max(1, all.length / limit);
    const picked = all.filter((_, i) => Math.floor(i / step) !== Math.floor((i - 1) / step) || i === 0).slice(0, limit);
    const testgen = createTestgen();
    // The copy is trusted, as a user's own library is (EVAL_TESTGEN_TRUST=0: measured untrusted).
    const savedTrust = process.env.AIP_TRUSTED_WORKSPACES;
    if (process.env.EVAL_TESTGEN_TRUST !== "0") process.env.AIP_TRUSTED_WORKSPACES = copy;
    const gen: Generated[] = [];
    const errors: string[] = [];
    const paths = new Set<string>();
    for (const t of picked) {
      try {
        const t0 = performance.now();
        const c = ctx();
        const payload = (await testgen(
          {
            action: "testgen",
            context: { workspace_root: copy, file_path: t.file },
            constraints: { function: t.name, framework: "vitest", run_timeout_ms: 60_000 },
          } as AipRequest,
          c,
        )) as Payload;
        let testPath = payload.test_path;
        // Two targets in one file share a test path: the second gets its own file.
        for (let i = 2; paths.has(testPath); i++) testPath = payload.test_path.replace(/\.test\./, `.${i}.test.`);
        paths.add(testPath);
        const content = payload.content;
        mkdirSync(dirname(join(copy, testPath)), { recursive: true });
        writeFileSync(join(copy, testPath), content);
        gen.push({
          ms: performance.now() - t0,
          target: t.name,
          file: t.file,
          test_path: testPath,
          content,
          examples: t.examples,
          kept: payload.tests.kept,
          value_assertions: payload.tests.value_assertions,
          raw_typecheck_ok: !payload.tests.verdicts.some((v) => v.reason.startsWith("typecheck")),
          agent_run: payload.checks.run,
          stages: c.timer.toJSON(),
        });
      } catch (err) {
        errors.push(`${t.file} ${t.name}: ${(err as Error).message.slice(0, 160)}`);
      }
    }
    if (savedTrust === undefined) delete process.env.AIP_TRUSTED_WORKSPACES;
    else process.env.AIP_TRUSTED_WORKSPACES = savedTrust;
    // Typecheck every written file in one program of the project's compiler, with the project's options.
    const judge = await judgeCompiler(copy);
    const program = judge.ts.createProgram({
      rootNames: gen.map((g) => join(copy, g.test_path)),
      options: judge.options,
    });
    const typeErrors = new Map<string, string>();
    for (const g of gen) {
      const sf = program.getSourceFile(join(copy, g.test_path));
      const d = (sf ? [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)] : []).filter(
        (x) => x.category === judge.ts.DiagnosticCategory.Error,
      );
      if (d.length > 0)
        typeErrors.set(g.test_path, judge.ts.flattenDiagnosticMessageText(d[0]!.messageText, " ").slice(0, 160));
    }
    // Run every written file in one run of the project's vitest, twice.
    const results = await vitestRun(
      copy,
      gen.map((g) => g.test_path),
    );
    const again = await vitestRun(
      copy,
      gen.map((g) => g.test_path),
    );
    let loaded = 0;
    let keptTests = 0;
    let passed = 0;
    let passedTwice = 0;
    const loadErrors: string[] = [];
    for (const g of gen) {
      const r = results.find((x) => x.name === join(copy, g.test_path));
      const ran = r !== undefined && !(r.status === "failed" && r.assertionResults.length === 0);
      if (ran) loaded++;
      else loadErrors.push(`${g.test_path}: ${r?.message ? failureLine(r.message) : "not in the report"}`);
      const r2 = again.find((x) => x.name === join(copy, g.test_path));
      (r?.assertionResults ?? []).forEach((a, i) => {
        if (a.status === "passed" || a.status === "failed") keptTests++;
        if (a.status === "passed") passed++;
        if (a.status === "passed" && r2?.assertionResults[i]?.status === "passed") passedTwice++;
      });
    }
    const asserting = gen.filter((g) => VALUE.test(keptText(g.content).replace(/toBeDefined\(\)/g, "")));
    const count = (re: RegExp): number => gen.reduce((n, g) => n + (g.content.match(re) ?? []).length, 0);
    const fromExamples = count(/\bit\(\s*["'`]example: /g);
    const observed = count(/\bit\(\s*["'`]observed: /g);
    const stubs = count(/\bit\.skip\(/g);
    const lonelyDefined = gen.filter(
      (g) =>
        /toBeDefined\(\)/.test(keptText(g.content)) && !VALUE.test(keptText(g.content).replace(/toBeDefined\(\)/g, "")),
    ).length;
    const exampleAsserted = withExamplesOf(gen).filter((g) => /\bit\(\s*["'`]example: /.test(g.content));
    const mut = await killMutants(copy, gen, results);
    const warm = gen
      .slice(1)
      .map((g) => g.ms)
      .sort((a, b) => a - b);
    const q = (f: number): number | null =>
      warm.length === 0 ? null : Math.round(warm[Math.min(warm.length - 1, Math.floor(f * warm.length))]!);
    const withExamples = gen.filter((g) => g.examples);
    const pct = (a: number, b: number): number | null => (b === 0 ? null : Math.round((1000 * a) / b) / 10);
    return {
      environment,
      counts: {
        files: gen.length,
        typecheck_ok: gen.length - typeErrors.size,
        run_ok: loaded,
        asserting: asserting.length,
        kept_tests: keptTests,
        passed,
        passed_twice: passedTwice,
        from_examples: fromExamples,
        observed,
        stubs,
        mutants: mut.total,
        mutants_killed: mut.killed,
        example_functions: withExamplesOf(gen).length,
        example_functions_asserted: exampleAsserted.length,
      },
      targets_total: all.length,
      targets_tried: picked.length,
      files: gen.length,
      agent_errors: errors,
      raw_typecheck_pct: pct(gen.filter((g) => g.raw_typecheck_ok).length, gen.length),
      typecheck_pct: pct(gen.length - typeErrors.size, gen.length),
      run_pct: pct(loaded, gen.length),
      asserting_files_pct: pct(asserting.length, gen.length),
      lone_toBeDefined_files: lonelyDefined,
      tests_from_examples: fromExamples,
      tests_observed: observed,
      stubs,
      passed_twice_pct: pct(passedTwice, keptTests),
      mutants: mut.total,
      mutants_killed: mut.killed,
      mutants_killed_pct: pct(mut.killed, mut.total),
      mutants_by_kind: mut.byKind,
      // Every survivor, for the input it would take to kill it.
      mutants_survived: mut.survived,
      testgen_ms: { p50_warm: q(0.5), p95_warm: q(0.95), first: gen[0] ? Math.round(gen[0].ms) : null },
      // Where a warm call's time goes: each stage's median over the warm calls.
      testgen_stage_p50_ms: Object.fromEntries(
        [...new Set(gen.slice(1).flatMap((g) => Object.keys(g.stages)))].map((k) => {
          const v = gen
            .slice(1)
            .map((g) => g.stages[k] ?? 0)
            .sort((a, b) => a - b);
          return [k, Math.round(v[Math.floor(v.length / 2)]!)];
        }),
      ),
      functions_with_examples: withExamples.length,
      asserting_with_examples_pct: pct(exampleAsserted.length, withExamples.length),
      kept_tests: keptTests,
      kept_pass_pct: pct(passed, keptTests),
      agent_runs: Object.fromEntries(
        ["passed", "failed", "timeout", "load-error", "skipped"].map((k) => [
          k,
          gen.filter((g) => g.agent_run === k).length,
        ]),
      ),
      type_errors: [...typeErrors].slice(0, 10).map(([f, m]) => `${f}: ${m}`),
      load_errors: loadErrors.slice(0, 10),
    };
  } finally {
    // EVAL_KEEP=1: the copy stays (with the mutant files) for a look at what ran.
    if (process.env.EVAL_KEEP === "1") process.stderr.write(`kept ${copy}\n`);
    else rmSync(copy, { recursive: true, force: true });
  }
}

/** All projects; `limit` targets per project. */
export async function evalTestgen(
  ps: TestgenProject[],
  checkoutModules: string,
  limit = 20,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { limit_per_project: limit };
  const sum = {
    files: 0,
    typecheck_ok: 0,
    run_ok: 0,
    asserting: 0,
    kept_tests: 0,
    passed: 0,
    passed_twice: 0,
    from_examples: 0,
    observed: 0,
    stubs: 0,
    mutants: 0,
    mutants_killed: 0,
    example_functions: 0,
    example_functions_asserted: 0,
  };
  // Every install first (one at a time: they share npm's cache), then the projects.
  const installs = new Map<string, Awaited<ReturnType<typeof installed>>>();
  for (const p of ps) if (!p.checkoutModules) installs.set(p.name, await installed(p));
  for (const p of ps) {
    const r = await evalTestgenProject(p, checkoutModules, limit, installs.get(p.name));
    out[p.name] = r;
    // Each project as it is done (a long run that is stopped still leaves its figures).
    process.stderr.write(`${JSON.stringify({ project: p.name, ...r })}\n`);
    const c = r.counts as typeof sum;
    for (const k of Object.keys(sum) as (keyof typeof sum)[]) sum[k] += c[k];
  }
  const pct = (a: number, b: number): number | null => (b === 0 ? null : Math.round((1000 * a) / b) / 10);
  out.all = {
    ...sum,
    typecheck_pct: pct(sum.typecheck_ok, sum.files),
    run_pct: pct(sum.run_ok, sum.files),
    asserting_files_pct: pct(sum.asserting, sum.files),
    kept_pass_pct: pct(sum.passed, sum.kept_tests),
    passed_twice_pct: pct(sum.passed_twice, sum.kept_tests),
    mutants_killed_pct: pct(sum.mutants_killed, sum.mutants),
    example_functions_asserted_pct: pct(sum.example_functions_asserted, sum.example_functions),
  };
  return out;
}

type VitestFile = { name: string; status: string; message?: string; assertionResults: { status: string }[] };

/** One run of the copy's vitest over `files`: its JSON report's files. */
async function vitestRun(copy: string, files: string[], timeout = 600_000): Promise<VitestFile[]> {
  const report = join(copy, `vitest-report-${Math.random().toString(36).slice(2)}.json`);
  await execa(
    join(copy, "node_modules", ".bin", "vitest"),
    ["run", ...files, "--reporter=json", `--outputFile=${report}`],
    {
      cwd: copy,
      reject: false,
      timeout,
      env: { CI: "1" },
    },
  );
  if (!existsSync(report)) return [];
  const out = (JSON.parse(readFileSync(report, "utf8")) as { testResults?: VitestFile[] }).testResults ?? [];
  rmSync(report, { force: true });
  return out;
}

/** The file without its `it.skip` / `it.todo` cases (what a kept test asserts). */
function keptText(content: string): string {
  return content.replace(/\bit\.skip\([\s\S]*?\n {2}\}\);/g, "").replace(/\bit\.todo\(.*\);/g, "");
}

function withExamplesOf<T extends { examples: boolean }>(gen: T[]): T[] {
  return gen.filter((g) => g.examples);
}

/** Mutants of each tested function per source file (mutants.ts), each run against that function's generated file. */
async function killMutants(
  copy: string,
  gen: Generated[],
  baseline: VitestFile[],
): Promise<{
  total: number;
  killed: number;
  byKind: Record<string, { total: number; killed: number }>;
  survived: string[];
}> {
  const byFile = new Map<string, Generated[]>();
  for (const g of gen) byFile.set(g.file, [...(byFile.get(g.file) ?? []), g]);
  const originals = new Map<string, string>();
  const runs: { g: Generated; m: Mutant; path: string }[] = [];
  let prefix = 0;
  for (const [file, gs] of byFile) {
    const abs = join(copy, file);
    const source = readFileSync(abs, "utf8");
    const { text, mutants } = mutateFile(
      source,
      file,
      [...new Set(gs.map((g) => g.target))],
      MUTANTS_PER_FUNCTION,
      `f${prefix++}m`,
    );
    originals.set(abs, source);
    writeFileSync(abs, text);
    for (const g of gs) {
      // A file whose tests fail on the original code cannot tell a mutant apart.
      const base = baseline.find((x) => x.name === join(copy, g.test_path));
      const clean = base !== undefined && base.assertionResults.every((a) => a.status !== "failed");
      for (const m of mutants.get(g.target) ?? []) {
        const path = g.test_path.replace(/\.test\.([cm]?[jt]sx?)$/, `.${m.id}.test.$1`);
        if (clean) {
          writeFileSync(join(copy, path), testForMutant(g.content, m.id));
          runs.push({ g, m, path });
        } else runs.push({ g, m, path: "" });
      }
    }
  }
  const res = await vitestRun(
    copy,
    runs.filter((r) => r.path !== "").map((r) => r.path),
    1_200_000,
  );
  for (const [abs, text] of originals) writeFileSync(abs, text);
  if (process.env.EVAL_KEEP !== "1")
    for (const r of runs) if (r.path !== "") rmSync(join(copy, r.path), { force: true });
  const byKind: Record<string, { total: number; killed: number }> = {};
  const survived: string[] = [];
  let killed = 0;
  for (const r of runs) {
    const f = r.path === "" ? undefined : res.find((x) => x.name === join(copy, r.path));
    // Killed: a test failed, or the file no longer loads; a file with no test that ran kills nothing.
    const dead = f !== undefined && f.status === "failed";
    const k = (byKind[r.m.kind] ??= { total: 0, killed: 0 });
    k.total++;
    if (dead) {
      k.killed++;
      killed++;
    } else
      survived.push(
        `${r.g.target}: ${r.m.what}${r.path === "" ? " (baseline failed)" : f === undefined ? " (not in the report)" : ` (${f.status})`}`,
      );
  }
  return { total: runs.length, killed, byKind, survived };
}
