/**
 * testgen measured (docs/performance.md, "testgen"): for exported functions and public methods of each
 * project, the agent generates a test in a temporary copy of the project whose node_modules is this
 * checkout's (so the copy has vitest installed, as a user's workspace would), with its own checks on.
 * The written files are then judged independently of the agent: one TypeScript program over the copy
 * and all generated files (typecheck %), one vitest run over all of them (run %: the file loaded, no
 * import or syntax error; pass %: kept tests that pass), and the files' own text (asserting %: at
 * least one value assertion, not `toBeDefined`).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execa } from "execa";
import ts from "typescript";
import { loadProject } from "../../agents/lib/code/project.js";
import { StageTimer } from "../../agents/lib/runtime/timer.js";
import type { HandlerContext } from "../../agents/lib/runtime/types.js";
import { createTestgen } from "../../agents/testgen/handler.js";
import { createLogger } from "../../protocol/log.js";
import type { AipRequest } from "../../protocol/schemas.js";

export interface TestgenProject {
  name: string;
  root: string;
  /** Source files (relative). */
  files: string[];
}

const silent = createLogger({ agentName: "eval", destination: false });

function ctx(): HandlerContext {
  return {
    traceId: "eval",
    signal: new AbortController().signal,
    deadline: Date.now() + 120_000,
    remainingMs: () => 120_000,
    timer: new StageTimer(),
    log: silent,
    warn: () => undefined,
  };
}

/** Exported functions (declared in the file) and public methods of exported classes, as `name` / `Class.method`. */
function targetsOf(root: string, file: string): { name: string; examples: boolean }[] {
  const sf = ts.createSourceFile(file, readFileSync(join(root, file), "utf8"), ts.ScriptTarget.Latest, true);
  const out: { name: string; examples: boolean }[] = [];
  const exported = (n: ts.Node): boolean =>
    ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const hasExample = (n: ts.Node): boolean => ts.getJSDocTags(n).some((t) => t.tagName.text === "example");
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
  target: string;
  file: string;
  test_path: string;
  content: string;
  examples: boolean;
  kept: number;
  value_assertions: number;
  raw_typecheck_ok: boolean;
  agent_run: string;
}

/** One project: generate, then judge the written files. `limit` targets at most (spread evenly over the list). */
export async function evalTestgenProject(
  p: TestgenProject,
  checkoutModules: string,
  limit: number,
): Promise<Record<string, unknown>> {
  const copy = mkdtempSync(join(tmpdir(), `eval-testgen-${p.name}-`));
  try {
    for (const f of ["package.json", "tsconfig.json", ...p.files]) {
      if (!existsSync(join(p.root, f))) continue;
      mkdirSync(dirname(join(copy, f)), { recursive: true });
      cpSync(join(p.root, f), join(copy, f));
    }
    symlinkSync(checkoutModules, join(copy, "node_modules"));
    const all = p.files.flatMap((f) => targetsOf(copy, f).map((t) => ({ ...t, file: f })));
    const step = Math.max(1, all.length / limit);
    const picked = all.filter((_, i) => Math.floor(i / step) !== Math.floor((i - 1) / step) || i === 0).slice(0, limit);
    const testgen = createTestgen();
    const gen: Generated[] = [];
    const errors: string[] = [];
    const paths = new Set<string>();
    for (const t of picked) {
      try {
        const payload = (await testgen(
          {
            action: "testgen",
            context: { workspace_root: copy, file_path: t.file },
            constraints: { function: t.name, framework: "vitest", run_timeout_ms: 60_000 },
          } as AipRequest,
          ctx(),
        )) as Payload;
        let testPath = payload.test_path;
        // Two targets in one file share a test path: the second gets its own file.
        for (let i = 2; paths.has(testPath); i++) testPath = payload.test_path.replace(/\.test\./, `.${i}.test.`);
        paths.add(testPath);
        const content = payload.content;
        mkdirSync(dirname(join(copy, testPath)), { recursive: true });
        writeFileSync(join(copy, testPath), content);
        gen.push({
          target: t.name,
          file: t.file,
          test_path: testPath,
          content,
          examples: t.examples,
          kept: payload.tests.kept,
          value_assertions: payload.tests.value_assertions,
          raw_typecheck_ok: !payload.tests.verdicts.some((v) => v.reason.startsWith("typecheck")),
          agent_run: payload.checks.run,
        });
      } catch (err) {
        errors.push(`${t.file} ${t.name}: ${(err as Error).message.slice(0, 160)}`);
      }
    }
    // Typecheck every written file in one program with the project's options.
    const project = await loadProject(copy);
    const program = ts.createProgram({
      rootNames: gen.map((g) => join(copy, g.test_path)),
      options: { ...project.options, noEmit: true },
    });
    const typeErrors = new Map<string, string>();
    for (const g of gen) {
      const sf = program.getSourceFile(join(copy, g.test_path));
      const d = sf ? [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)] : [];
      if (d.length > 0)
        typeErrors.set(g.test_path, ts.flattenDiagnosticMessageText(d[0]!.messageText, " ").slice(0, 160));
    }
    // Run every written file in one vitest run.
    const report = join(copy, "vitest-report.json");
    await execa(
      join(checkoutModules, ".bin", "vitest"),
      ["run", ...gen.map((g) => g.test_path), "--reporter=json", `--outputFile=${report}`],
      {
        cwd: copy,
        reject: false,
        timeout: 600_000,
        env: { CI: "1" },
      },
    );
    const results = existsSync(report)
      ? ((
          JSON.parse(readFileSync(report, "utf8")) as {
            testResults: { name: string; status: string; message?: string; assertionResults: { status: string }[] }[];
          }
        ).testResults ?? [])
      : [];
    let loaded = 0;
    let keptTests = 0;
    let passed = 0;
    const loadErrors: string[] = [];
    for (const g of gen) {
      const r = results.find((x) => x.name === join(copy, g.test_path));
      const ran = r !== undefined && !(r.status === "failed" && r.assertionResults.length === 0);
      if (ran) loaded++;
      else loadErrors.push(`${g.test_path}: ${(r?.message ?? "not in the report").split("\n")[0]!.slice(0, 160)}`);
      for (const a of r?.assertionResults ?? []) {
        if (a.status === "passed" || a.status === "failed") keptTests++;
        if (a.status === "passed") passed++;
      }
    }
    const asserting = gen.filter((g) => VALUE.test(g.content.replace(/toBeDefined\(\)/g, "")));
    const withExamples = gen.filter((g) => g.examples);
    const pct = (a: number, b: number): number | null => (b === 0 ? null : Math.round((1000 * a) / b) / 10);
    return {
      targets_total: all.length,
      targets_tried: picked.length,
      files: gen.length,
      agent_errors: errors,
      raw_typecheck_pct: pct(gen.filter((g) => g.raw_typecheck_ok).length, gen.length),
      typecheck_pct: pct(gen.length - typeErrors.size, gen.length),
      run_pct: pct(loaded, gen.length),
      asserting_files_pct: pct(asserting.length, gen.length),
      functions_with_examples: withExamples.length,
      asserting_with_examples_pct: pct(withExamples.filter((g) => asserting.includes(g)).length, withExamples.length),
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
    rmSync(copy, { recursive: true, force: true });
  }
}

/** All projects; `limit` targets per project. */
export async function evalTestgen(
  ps: TestgenProject[],
  checkoutModules: string,
  limit = 12,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { limit_per_project: limit };
  for (const p of ps) out[p.name] = await evalTestgenProject(p, checkoutModules, limit);
  return out;
}
