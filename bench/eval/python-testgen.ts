/**
 * testgen on Python measured under real pytest (part of `npm run eval:code -- python`): for the public
 * functions and methods of each corpus library, testgen writes a file (its own collection check off);
 * then all of a library's files run in one `python3 -m pytest` inside the workspace sandbox
 * (agents/lib/sandbox/workspace-run.ts, the workspace trusted as a user's own library is), and the
 * short summary says, per file, whether it was collected without an import or syntax error, and per
 * test whether it passed, failed or was skipped.
 */
import { readdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { standaloneContext } from "../../agents/lib/runtime/context.js";
import { createLogger } from "../../protocol/util/log.js";
import { loadLanguage } from "../../agents/lib/code/languages/registry.js";
import type { CodeLanguage } from "../../agents/lib/code/languages/types.js";
import type { PythonDocument } from "../../agents/lib/code/languages/python/index.js";
import { runWorkspaceCode } from "../../agents/lib/sandbox/workspace-run.js";
import { createTestgen } from "../../agents/testgen/handler.js";

interface Lib {
  name: string;
  /** Root-relative package directories whose modules are targets. */
  packages: string[];
  /**
   * Files a build writes that a source checkout lacks (hatch-vcs writes `_version.py`), supplied as the
   * build would: without them the package cannot be imported at all.
   */
  built?: Record<string, string>;
}

const silent = createLogger({ agentName: "eval", destination: false });

/** Public top-level functions and public methods of public classes (not dunders), with a cursor on the name. */
function targets(py: CodeLanguage<PythonDocument>, text: string): { name: string; line: number; column: number }[] {
  const out: { name: string; line: number; column: number }[] = [];
  const at = (offset: number): { line: number; column: number } => {
    const before = text.slice(0, offset);
    return { line: before.split("\n").length, column: offset - before.lastIndexOf("\n") };
  };
  for (const d of py.parse(text).outline) {
    if (d.name.startsWith("_")) continue;
    if (d.kind === "function") out.push({ name: d.name, ...at(d.name_start) });
    if (d.kind === "class")
      for (const m of d.children)
        if ((m.kind === "method" || m.kind === "function") && !m.name.startsWith("_"))
          out.push({ name: `${d.name}.${m.name}`, ...at(m.name_start) });
  }
  return out;
}

export async function evalPythonTestgen(
  corpus: string,
  libs: readonly Lib[],
  python: string,
  perLib: number,
): Promise<Record<string, unknown>> {
  const py = (await loadLanguage("python")) as unknown as CodeLanguage<PythonDocument>;
  const testgen = createTestgen();
  const out: Record<string, unknown> = {};
  const total = { files: 0, collected: 0, tests: 0, passed: 0, failed: 0, skipped: 0, generated_ms: [] as number[] };
  const saved = process.env.AIP_TRUSTED_WORKSPACES;
  const savedRoots = process.env.AIP_WORKSPACE_ROOTS;
  for (const lib of libs) {
    const root = realpathSync(join(corpus, lib.name));
    process.env.AIP_TRUSTED_WORKSPACES = root;
    process.env.AIP_WORKSPACE_ROOTS = [savedRoots, root].filter(Boolean).join(":");
    const all: { file: string; name: string; line: number; column: number }[] = [];
    for (const pkg of lib.packages) {
      const files = readdirSync(join(root, pkg)).filter((f) => f.endsWith(".py"));
      for (const f of files.sort())
        for (const t of targets(py, readFileSync(join(root, pkg, f), "utf8"))) all.push({ file: `${pkg}/${f}`, ...t });
    }
    const step = Math.max(1, all.length / perLib);
    const picked = all
      .filter((_, i) => Math.floor(i / step) !== Math.floor((i - 1) / step) || i === 0)
      .slice(0, perLib);
    const generated: Record<string, string> = {};
    const errors: string[] = [];
    for (const t of picked) {
      const t0 = performance.now();
      try {
        const payload = (await testgen(
          {
            action: "testgen",
            context: { workspace_root: root, file_path: t.file, cursor: { line: t.line, column: t.column } },
            // collection is measured below, all files in one run
            constraints: { run_timeout_ms: 0 },
          } as unknown as AipRequest,
          standaloneContext({ traceId: "eval", budgetMs: 60_000, log: silent }),
        )) as { test_path: string; content: string };
        let path = payload.test_path;
        for (let i = 2; generated[path] !== undefined; i++) path = payload.test_path.replace(/\.py$/, `_${i}.py`);
        generated[path] = payload.content;
        total.generated_ms.push(performance.now() - t0);
      } catch (err) {
        errors.push(`${t.file} ${t.name}: ${(err as Error).message.slice(0, 160)}`);
      }
    }
    const paths = Object.keys(generated);
    if (paths.length === 0) {
      out[lib.name] = { targets: all.length, files: 0, generation_errors: errors.slice(0, 10) };
      continue;
    }
    const r = await runWorkspaceCode({
      workspaceRoot: root,
      argv: [
        python,
        "-m",
        "pytest",
        "-q",
        "-rA",
        "--tb=no",
        "--color=no",
        "-p",
        "no:cacheprovider",
        "--continue-on-collection-errors",
        ...paths,
      ],
      files: { ...generated, ...(lib.built ?? {}) },
      env: { PYTHONPATH: [root, join(root, "src")].join(":"), PYTHONDONTWRITEBYTECODE: "1" },
      timeoutMs: 300_000,
    });
    if (r.status !== "ran") {
      out[lib.name] = { skipped: r.reason };
      continue;
    }
    const lines = r.stdout.split("\n");
    const collectErrors = new Set(
      lines.flatMap((l) => /^ERROR ([^\s:]+\.py)(?: -|$)/.exec(l)?.[1] ?? []).filter((p) => paths.includes(p)),
    );
    const count = (word: string): number => lines.filter((l) => l.startsWith(`${word} `)).length;
    const skippedTests = lines
      .filter((l) => l.startsWith("SKIPPED "))
      .reduce((n, l) => n + Number(/^SKIPPED \[(\d+)\]/.exec(l)?.[1] ?? 1), 0);
    const passed = count("PASSED");
    const failed = count("FAILED");
    const collected = paths.length - collectErrors.size;
    out[lib.name] = {
      targets: all.length,
      files: paths.length,
      collected,
      collected_share: collected / Math.max(1, paths.length),
      tests_run: passed + failed,
      passed,
      failed,
      skipped_stubs: skippedTests,
      pass_share: passed + failed > 0 ? passed / (passed + failed) : null,
      collect_errors: [...collectErrors].slice(0, 10),
      failures: lines.filter((l) => l.startsWith("FAILED ")).slice(0, 10),
      generation_errors: errors.slice(0, 10),
      pytest_summary: lines.filter((l) => /\d+ (passed|failed|error)/.test(l)).pop() ?? "",
    };
    total.files += paths.length;
    total.collected += collected;
    total.passed += passed;
    total.failed += failed;
    total.skipped += skippedTests;
  }
  if (savedRoots === undefined) delete process.env.AIP_WORKSPACE_ROOTS;
  else process.env.AIP_WORKSPACE_ROOTS = savedRoots;
  if (saved === undefined) delete process.env.AIP_TRUSTED_WORKSPACES;
  else process.env.AIP_TRUSTED_WORKSPACES = saved;
  const ms = total.generated_ms.sort((a, b) => a - b);
  return {
    ...out,
    files: total.files,
    collected_share: total.collected / Math.max(1, total.files),
    tests_run: total.passed + total.failed,
    pass_share: total.passed + total.failed > 0 ? total.passed / (total.passed + total.failed) : null,
    skipped_stubs: total.skipped,
    generate_p50_ms: ms[Math.floor(ms.length / 2)] ?? null,
    generate_p95_ms: ms[Math.floor(ms.length * 0.95)] ?? null,
  };
}
