/**
 * testgen on Python: a pytest file (or unittest, when the workspace's tests use it) for the function
 * or method at the cursor or named in constraints.function, importing it the way the workspace's own
 * tests import its modules. The file is parsed; in a trusted workspace, with bubblewrap, it is also
 * collected by `python3 -m pytest --collect-only` inside the sandbox (the answer says which check ran).
 */
import { readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { AipError } from "../../protocol/contract/errors.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { PYTHON_BUILTINS, type PythonDocument } from "../lib/code/languages/python/index.js";
import { importRoots, moduleNameOf } from "../lib/code/languages/python/modules.js";
import type { CodeLanguage, Declaration } from "../lib/code/languages/types.js";
import { offsetAt } from "../lib/code/position.js";
import { readRequestRaw } from "../lib/code/source.js";
import { readContainedSync } from "../lib/code/workspace.js";
import { runWorkspaceCode, workspaceTrust } from "../lib/sandbox/workspace-run.js";
import type { HandlerContext } from "../lib/runtime/types.js";
import { pythonLanguage, pythonPartial, pythonSignature } from "../lib/code/languages/python/report.js";
import { exampleCases, guardCases, requiredParams, type PyCase } from "./python-cases.js";

/** The interpreter collecting generated tests (AIP_PYTHON; Debian's has pytest). */
export function pythonInterpreter(env: NodeJS.ProcessEnv = process.env): string {
  return env.AIP_PYTHON ?? "/usr/bin/python3";
}

/** Test files looked at to learn the workspace's style. */
const MAX_STYLE_FILES = 200;
const SKIP_DIRS = new Set(["node_modules", ".git", ".venv", "venv", "__pycache__", ".tox", "build", "dist"]);

interface TestStyle {
  framework: "pytest" | "unittest";
  /** Where the workspace keeps its tests (root-relative), if it has any. */
  dir?: string;
  files: string[];
}

function testFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number): void => {
    if (out.length >= MAX_STYLE_FILES || depth > 6) return;
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const e of entries.sort()) {
      if (SKIP_DIRS.has(e) || e.startsWith(".")) continue;
      const p = join(dir, e);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(p, depth + 1);
      else if (/^test_.*\.py$|_test\.py$/.test(e)) out.push(p);
    }
  };
  walk(root, 0);
  return out;
}

function testStyle(root: string | undefined): TestStyle {
  if (root === undefined) return { framework: "pytest", files: [] };
  const files = testFiles(root);
  let unittest = 0;
  let pytest = 0;
  for (const f of files.slice(0, 50)) {
    const text = readContainedSync(root, f, 256 * 1024) ?? "";
    if (/^\s*import pytest|^\s*from pytest import|@pytest\./m.test(text)) pytest++;
    else if (/unittest\.TestCase|^\s*from unittest import TestCase/m.test(text)) unittest++;
    else pytest++;
  }
  const dirs = new Map<string, number>();
  for (const f of files) {
    const d = relative(root, f).split(sep).slice(0, -1).join("/");
    dirs.set(d, (dirs.get(d) ?? 0) + 1);
  }
  const dir = [...dirs.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  return { framework: unittest > pytest ? "unittest" : "pytest", ...(dir !== undefined ? { dir } : {}), files };
}

function findTarget(
  py: CodeLanguage<PythonDocument>,
  doc: PythonDocument,
  request: AipRequest,
  name?: string,
): Declaration {
  if (name !== undefined) {
    const [a, b] = name.split(".");
    const found = py
      .declarations(doc)
      .find((d) => (b === undefined ? d.name === a && d.container === "" : d.name === b && d.container === a));
    if (found && (found.kind === "function" || found.kind === "method")) return found;
    throw new AipError(
      "AIP_ERR_INVALID_FIELD",
      `constraints.function: no function or method ${JSON.stringify(name)} in the file`,
      {
        extensions: { errors: [{ path: "constraints.function", message: "not found" }] },
      },
    );
  }
  const cursor = request.context.cursor;
  if (!cursor)
    throw new AipError(
      "AIP_ERR_MISSING_FIELD",
      "Missing required field: context.cursor (or name the function in constraints.function)",
      {
        extensions: { fields: ["context.cursor", "constraints.function"] },
      },
    );
  const d = py.declarationAt(doc, offsetAt(doc.source, cursor), ["function", "method"]);
  if (!d)
    throw new AipError(
      "AIP_ERR_INVALID_FIELD",
      `context.cursor: no function or method at line ${cursor.line}, column ${cursor.column}`,
      {
        extensions: { errors: [{ path: "context.cursor", message: "not inside a function" }] },
      },
    );
  return d;
}

/** The constructor call for a method's class: `__init__`'s required parameters from the workspace's own calls, else undefined. */
function constructorCall(doc: PythonDocument, cls: string, texts: readonly string[]): string | undefined {
  const klass = doc.outline.find((d) => d.kind === "class" && d.name === cls);
  const init = klass?.children.find((c) => c.name === "__init__");
  if (!init || requiredParams(init).length === 0) return `${cls}()`;
  const re = new RegExp(`(?<![\\w.])${cls}\\(([^()\\n]*)\\)`, "g");
  for (const t of texts)
    for (const m of t.matchAll(re)) {
      const args = m[1]!.trim();
      // only literal arguments: a name would need its own set-up
      if (
        args &&
        /^("[^"]*"|'[^']*'|b?"[^"]*"|b?'[^']*'|-?\d+(\.\d+)?|True|False|None|\s|,|=|[A-Za-z_]\w*=)+$/.test(args)
      )
        return `${cls}(${args})`;
    }
  return undefined;
}

function indent(text: string, pad: string): string {
  return text
    .split("\n")
    .map((l) => (l ? pad + l : l))
    .join("\n");
}

function render(framework: "pytest" | "unittest", cases: PyCase[], imports: string[], className: string): string {
  const head = [framework === "pytest" ? "import pytest" : "import unittest", "", ...imports, "", ""];
  const body: string[] = [];
  for (const c of cases) {
    const lines = [...c.setup];
    if (framework === "pytest") {
      if (c.kind === "equal") lines.push(`assert ${c.expr} == ${c.expected}`);
      else if (c.kind === "approx") lines.push(`assert ${c.expr} == pytest.approx(${c.expected})`);
      else if (c.kind === "raises") lines.push(`with pytest.raises(${c.expected}):`, indent(c.expr, "    "));
      else lines.push(`pytest.skip(${JSON.stringify(`TODO: ${c.reason}`)})`);
      body.push(`def ${c.name}():\n${indent(lines.join("\n"), "    ")}\n`);
    } else {
      if (c.kind === "equal") lines.push(`self.assertEqual(${c.expr}, ${c.expected})`);
      else if (c.kind === "approx") lines.push(`self.assertAlmostEqual(${c.expr}, ${c.expected})`);
      else if (c.kind === "raises") lines.push(`with self.assertRaises(${c.expected}):`, indent(c.expr, "    "));
      else lines.push(`self.skipTest(${JSON.stringify(`TODO: ${c.reason}`)})`);
      body.push(`    def ${c.name}(self):\n${indent(lines.join("\n"), "        ")}\n`);
    }
  }
  if (framework === "pytest") return `${head.join("\n")}${body.join("\n\n")}`;
  return `${head.join("\n")}class ${className}(unittest.TestCase):\n${body.join("\n")}\n\nif __name__ == "__main__":\n    unittest.main()\n`;
}

/** Names the examples use that the module binds (imported from it beside the target). */
function moduleNamesUsed(doc: PythonDocument, cases: PyCase[]): string[] {
  const bound = new Set(doc.bindings.map((b) => b.name));
  const builtins = new Set(PYTHON_BUILTINS);
  const used = new Set<string>();
  for (const c of cases) {
    if (c.kind === "skip") continue;
    const text = [...c.setup, c.expr, c.kind === "raises" ? (c.expected ?? "") : ""]
      .join("\n")
      .replace(/(["'])(?:\\.|(?!\1).)*\1/g, "");
    for (const m of text.matchAll(/(?<![\w.])([A-Za-z_][A-Za-z0-9_]*)/g))
      if (bound.has(m[1]!) && !builtins.has(m[1]!)) used.add(m[1]!);
  }
  return [...used];
}

export async function testgenPython(
  request: AipRequest,
  ctx: HandlerContext,
  constraints: {
    framework?: string | undefined;
    function?: string | undefined;
    test_path?: string | undefined;
    run_timeout_ms?: number | undefined;
  },
): Promise<unknown> {
  const src = await readRequestRaw(request);
  const py = await pythonLanguage();
  const doc = py.parse(src.text, src.displayPath);
  ctx.timer.mark("parse");
  const target = findTarget(py, doc, request, constraints.function);
  const style = testStyle(src.root);
  const asked = constraints.framework;
  if (asked !== undefined && asked !== "pytest" && asked !== "unittest")
    throw new AipError(
      "AIP_ERR_INVALID_FIELD",
      `constraints.framework: ${asked} is not a Python test framework; use pytest or unittest`,
      {
        extensions: { errors: [{ path: "constraints.framework", message: "not a Python framework" }] },
      },
    );
  const framework = (asked ?? style.framework) as "pytest" | "unittest";
  const notes: string[] = [];
  notes.push(
    asked
      ? `framework ${framework} as asked`
      : `framework ${framework}${style.files.length ? " (as the workspace's tests use)" : " (the default)"}`,
  );
  // The module name the workspace's tests import: under the root they put on sys.path.
  const roots = src.root !== undefined && src.absPath !== undefined ? importRoots(src.root, src.absPath) : [];
  const mod = src.absPath !== undefined ? moduleNameOf(src.absPath, roots) : undefined;
  const moduleName =
    mod?.name ??
    (src.displayPath ?? "module")
      .split("/")
      .pop()!
      .replace(/\.pyi?$/, "");
  const isMethod = target.kind === "method";
  const cls = isMethod ? target.container.split(".")[0]! : undefined;
  const base = (cls ? `${cls}_${target.name}` : target.name).replace(/^_+/, "").toLowerCase();
  const styleTexts = style.files.slice(0, 50).map((f) => readContainedSync(src.root!, f, 256 * 1024) ?? "");
  let callee = target.name;
  const cases: PyCase[] = [];
  const fromExamples = exampleCases(py, target, base);
  cases.push(...fromExamples);
  if (isMethod && cls) {
    const ctor = constructorCall(doc, cls, [doc.source, ...styleTexts]);
    callee = ctor ? `${ctor}.${target.name}` : target.name;
    if (!ctor && fromExamples.length === 0)
      cases.push({
        name: `test_${base}`,
        setup: [],
        kind: "skip",
        expr: "",
        reason: `${cls}(...) needs constructor arguments the code does not show`,
        from_example: false,
      });
  }
  if (!isMethod || callee !== target.name) cases.push(...guardCases(target, doc.source, callee, base));
  if (cases.every((c) => c.kind === "skip"))
    cases.push({
      name: `test_${base}_needs_values`,
      setup: [],
      kind: "skip",
      expr: "",
      reason: `${isMethod ? `${cls}.` : ""}${target.name}(${requiredParams(target).join(", ")}) has no doctest or guarded raise to take expected values from`,
      from_example: false,
    });
  // Names the cases need: the target (or its class), names the examples use, custom exception classes.
  const names = new Set<string>([cls ?? target.name, ...moduleNamesUsed(doc, cases)]);
  const imports = [`from ${moduleName} import ${[...names].join(", ")}`];
  const content = render(
    framework,
    cases,
    imports,
    `Test${(cls ?? "") + target.name.replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase())}`,
  );
  // Where it goes: beside the workspace's tests, else tests/.
  const testDir = style.dir ?? "tests";
  const testPath =
    constraints.test_path ?? `${testDir ? `${testDir}/` : ""}test_${moduleName.split(".").pop()}_${base}.py`;
  const parsed = py.parse(content, testPath);
  if (parsed.diagnostics.length > 0) notes.push(`the generated file does not parse: ${parsed.diagnostics[0]!.message}`);
  // Collection runs the workspace's modules and conftest.py: only trusted, only sandboxed.
  let check: "collect" | "parse" = "parse";
  let run: "passed" | "failed" | "timeout" | "load-error" | "skipped" = "skipped";
  let skippedWhy: string | undefined =
    src.root === undefined ? "no workspace_root: nothing to collect against" : undefined;
  const timeout = constraints.run_timeout_ms ?? 20_000;
  if (src.root !== undefined && timeout > 0 && parsed.diagnostics.length === 0) {
    const trust = workspaceTrust(src.root);
    if (!trust.trusted) skippedWhy = `the workspace is not trusted (${trust.hint}); checked by parsing alone`;
    else {
      const importRoot = mod ? relative(src.root, mod.root) : "";
      const r = await runWorkspaceCode({
        workspaceRoot: src.root,
        argv: [pythonInterpreter(), "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", testPath],
        files: { [testPath]: content },
        env: { PYTHONPATH: join(src.root, importRoot), PYTHONDONTWRITEBYTECODE: "1" },
        timeoutMs: Math.min(timeout, Math.max(1000, ctx.remainingMs() - 500)),
      });
      if (r.status === "skipped") skippedWhy = `${r.reason}; checked by parsing alone`;
      else {
        check = "collect";
        run = r.timedOut ? "timeout" : r.exitCode === 0 ? "passed" : "load-error";
        if (run !== "passed")
          notes.push(
            `pytest --collect-only: ${(r.stdout + r.stderr).trim().split("\n").slice(-3).join(" | ").slice(0, 300)}`,
          );
      }
    }
  }
  ctx.timer.mark("check");
  const kept = cases.filter((c) => c.kind !== "skip");
  return {
    ...(src.displayPath !== undefined ? { file_path: src.displayPath } : {}),
    language: "python",
    ...pythonPartial(doc),
    test_path: testPath,
    framework,
    content,
    signature: pythonSignature(target, !target.name.startsWith("_"), doc.source),
    import: { specifier: moduleName, name: cls ?? target.name, default: false },
    notes,
    tests: {
      kept: kept.length,
      todo: cases.length - kept.length,
      dropped: 0,
      value_assertions: kept.length,
      from_examples: kept.filter((c) => c.from_example).length,
      verdicts: cases
        .filter((c) => c.kind === "skip")
        .map((c) => ({ test: c.name, outcome: "todo", reason: c.reason ?? "" })),
    },
    checks: {
      typecheck: "skipped",
      run,
      runner: check === "collect" ? "pytest" : null,
      check,
      skipped: { typecheck: "Python is not typechecked", ...(skippedWhy !== undefined ? { run: skippedWhy } : {}) },
      notes: [
        check === "collect"
          ? "collected with python3 -m pytest --collect-only in the sandbox"
          : "checked by parsing alone",
      ],
    },
  };
}
