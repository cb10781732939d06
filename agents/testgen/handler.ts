/** The testgen action: the function at the cursor (or named) → a formatted, parse-checked test file. */
import { stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { ts as tsc } from "../lib/code/typescript.js";
import { actionInput } from "../../protocol/contract/actions.js";
import { AipError } from "../../protocol/contract/errors.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { ParseCache } from "../lib/code/cache.js";
import { moduleExports } from "../lib/code/exports.js";
import { dialectOf } from "../lib/code/language.js";
import {
  guardHandler,
  parseProgram,
  partialFields,
  reportDiagnostics,
  type Node,
  type Program,
} from "../lib/code/parse.js";
import { signatureOf } from "../lib/code/signature.js";
import { loadRequestSource } from "../lib/code/source.js";
import { readContained } from "../lib/code/workspace.js";
import type { ModelEngine } from "../lib/llm/engine.js";
import { TextMemo } from "../lib/memo.js";
import type { HandlerContext } from "../lib/runtime/types.js";
import { requestLanguage } from "../lib/code/languages/registry.js";
import { importStyle, testLocation } from "./paths.js";
import { testgenPython } from "./python.js";
import { readDocExamples, workspaceResolves } from "./examples.js";
import { guardCases } from "./guards.js";
import { characterizePlan, finishStubs, type Observation } from "./characterize.js";
import { effectsOf, environmentOf } from "./effects.js";
import { callSites, inputVectors } from "./inputs.js";
import { modelProposals } from "./model.js";
import { checkPlan, formatTest, prettierFormat } from "./pipeline.js";
import { assemble, constructorArgs, planTests, thrownBy, type Framework, type TestPlan } from "./render.js";
import { targetAtCursor, targetByName } from "./target.js";
import { typedCall, type TypedCall, type TypedOptions } from "./typed.js";
import {
  buildProgram,
  checkProject,
  DEFAULT_RUN_TIMEOUT_MS,
  readWorkspaceText,
  standInForTest,
  type CheckProject,
} from "./verify.js";

/** Arguments computed for lone buffers (see the use). */
const bufferArgs = new TextMemo<TypedCall | undefined>(64);

/** The model's time for proposals, at most (and a quarter of what the request has left). */
const MODEL_LIMIT_MS = 5000;

/** The observation run's time, at most (and a third of what the request has left). */
const OBSERVE_LIMIT_MS = 15_000;

/** Time kept back from the request's deadline for formatting and answering after a test run. */
const RUN_MARGIN_MS = 1500;

/** Whether the workspace's package.json says `"type": "module"` (its `.ts`/`.js` files are ES modules to Node). */
async function isEsmPackage(root: string | undefined): Promise<boolean> {
  if (root === undefined) return false;
  try {
    const pkg = await readContained(root, join(root, "package.json"), { maxBytes: 256 * 1024 });
    return (JSON.parse(pkg.text) as { type?: unknown }).type === "module";
  } catch {
    return false;
  }
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Names exported by `export { a, b as c }` lists (local name → exported name). */
function exportedLocals(program: Program): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of program.body) {
    if (s.type === "ExportNamedDeclaration" && !s.source) {
      for (const sp of s.specifiers)
        if (sp.local.type === "Identifier" && sp.exported.type === "Identifier")
          out.set(sp.local.name, sp.exported.name);
    }
  }
  return out;
}

/** How the top-level declaration `decl` (a function, variable or class) is exported: its import name and default-ness. */
function exportOf(
  program: Program,
  top: Node | undefined,
  name: string,
): { name: string; isDefault: boolean } | undefined {
  const wrapper = program.body.find(
    (s) => top !== undefined && s.range[0] <= top.range[0] && top.range[1] <= s.range[1],
  );
  if (wrapper?.type === "ExportDefaultDeclaration") return { name, isDefault: true };
  if (wrapper?.type === "ExportNamedDeclaration") return { name, isDefault: false };
  const alias = exportedLocals(program).get(name);
  if (alias === "default") return { name, isDefault: true };
  return alias !== undefined ? { name: alias, isDefault: false } : undefined;
}

/** A prettier run to load its parsers before the first request. */
export async function warmPrettier(): Promise<void> {
  await prettierFormat("const a = 1;\n", { parser: "typescript" });
  await prettierFormat("const a = 1;\n", { parser: "babel" });
}

/** The testgen handler over a parse cache (one per process). */
export function createTestgen(cache = new ParseCache(), host?: ModelEngine) {
  return guardHandler(async (request: AipRequest, ctx: HandlerContext): Promise<unknown> => {
    const { constraints } = actionInput("testgen", request);
    if (requestLanguage(request.context.language, request.context.file_path) === "python")
      return testgenPython(request, ctx, constraints);
    if (constraints.framework === "pytest" || constraints.framework === "unittest")
      throw new AipError(
        "AIP_ERR_INVALID_FIELD",
        `constraints.framework: ${constraints.framework} is for Python; use vitest, jest or node:test`,
        { extensions: { errors: [{ path: "constraints.framework", message: "not a TypeScript framework" }] } },
      );
    const framework: Framework = constraints.framework ?? "vitest";
    const fnName = constraints.function;
    const testPathIn = constraints.test_path;
    const cursor = request.context.cursor;
    if (fnName === undefined && cursor === undefined) {
      throw new AipError(
        "AIP_ERR_MISSING_FIELD",
        "Missing required field: context.cursor (or name the function in constraints.function)",
        {
          extensions: { fields: ["context.cursor", "constraints.function"] },
        },
      );
    }
    const src = await loadRequestSource(request, cache);
    const { parsed } = src;
    ctx.timer.mark("parse");
    // Everything is read off the tree before the first await below (the cache may hand the tree on).
    const target = fnName !== undefined ? targetByName(parsed, fnName) : targetAtCursor(parsed, cursor!);
    const sig = signatureOf(target.slice, parsed.source);
    const ts = parsed.dialect.language === "typescript";
    const notes: string[] = [];
    const program = parsed.program;
    const topDecl = target.cls ?? target.slice.decl;
    const exportName = target.cls ? ((target.cls as { id?: { name: string } | null }).id?.name ?? "default") : sig.name;
    const exp = target.importable ? exportOf(program, topDecl, exportName) : undefined;
    const isPrivate =
      sig.name.startsWith("#") || /^(private|protected)\b/.test(sig.text.replace(/^(static|async|public)\s+/, ""));
    if (!target.importable)
      notes.push(
        `${sig.name} is local to another function; it cannot be imported. Test it through the function that contains it.`,
      );
    else if (!exp)
      notes.push(`${target.cls ? `class ${exportName}` : sig.name} is not exported; export it to test it directly.`);
    // An error reported right after the function (a missing `}` at the end of the file) is the function's too.
    let end = target.slice.range[1];
    while (end < parsed.source.length && /\s/.test(parsed.source[end]!)) end++;
    const broken = parsed.diagnostics.filter((d) => target.slice.range[0] <= d.start && d.start <= end);
    if (broken.length > 0) {
      const first = reportDiagnostics({ ...parsed, diagnostics: broken })[0]!;
      notes.push(
        `${sig.name} has a syntax error at line ${first.line} (${first.message}); the test is built from what parsed.`,
      );
    }
    if (isPrivate) notes.push(`${sig.name} is not public; test it through the public methods.`);
    const isStatic = target.slice.decl.type === "MethodDefinition" && target.slice.decl.static;
    const ctorArgs = target.cls ? constructorArgs(target.cls, parsed.source, ts) : [];
    const throws = thrownBy(target.slice.fn);
    const effects = effectsOf(target.slice.fn, program);
    const imports = program.body.flatMap((s) => (s.type === "ImportDeclaration" ? [s.source.value] : []));
    const isMethod = sig.class !== undefined;
    const environment = environmentOf(target.slice.fn, program);
    const docValue = target.slice.doc?.value;
    // An example may use the module's other exports without importing them: its public API (read off
    // the tree before the first await; re-exports are followed into the workspace's other files).
    const apiNames = docValue?.includes("@example") ? moduleExports(parsed, src.absPath, src.root, cache) : undefined;
    const guards = throws !== undefined ? guardCases(target.slice.fn, sig.params, parsed.source) : [];
    const fnEnd = target.slice.fn.range[1];
    const sourceText = parsed.source;
    const fnSource = parsed.source.slice(target.slice.range[0], target.slice.range[1]);
    const api = apiNames ? (await apiNames).exports : [];
    const read = readDocExamples(docValue, sig, isMethod, isStatic, exp?.name, {
      resolves: workspaceResolves(src.root),
      exports: new Set(api.filter((e) => !e.type_only && e.default !== true).map((e) => e.name)),
      ...(environment !== undefined ? { environment } : {}),
    });
    const examples = read.cases;
    notes.push(...read.notes);
    const mirror = src.root !== undefined && (await isDir(join(src.root, "test")));
    // The checker: the workspace's project (its tsconfig, or defaults), the buffer as the request sent it.
    const project = await checkProject(src.root);
    ctx.timer.mark("project");
    // Relative imports spelled as the workspace resolves them (see paths.ts importStyle).
    const mr = project.options.moduleResolution;
    const mod = project.options.module;
    const K = tsc.ModuleKind;
    const nodeResolution =
      mr === tsc.ModuleResolutionKind.NodeNext ||
      mr === tsc.ModuleResolutionKind.Node16 ||
      (mr === undefined && mod !== undefined && mod >= K.Node16 && mod <= K.NodeNext);
    const displayPath = src.displayPath ?? (ts ? "module.ts" : "module.js");
    const { style } = importStyle({
      imports,
      nodeResolution,
      tsExtensions: !!(project.options.allowImportingTsExtensions || project.options.rewriteRelativeImportExtensions),
      esm: /\.m[jt]s$/.test(testPathIn ?? displayPath) || (await isEsmPackage(src.root)),
    });
    const loc = testLocation(displayPath, {
      mirrorUnderTest: mirror,
      style,
      ...(testPathIn ? { testPath: testPathIn } : {}),
    });
    const importable = exp !== undefined && !isPrivate;
    const callee: Parameters<typeof typedCall>[2]["callee"] = !isMethod
      ? { kind: "function", name: exp?.name ?? sig.name }
      : { kind: isStatic ? "static" : "instance", cls: exp?.name ?? exportName, name: sig.name };
    const srcAbs = src.absPath ?? join(project.root, src.displayPath ?? (ts ? "module.ts" : "module.js"));
    if (typeof request.context.source_code === "string" || src.absPath === undefined)
      project.overlay.set(srcAbs, sourceText);
    const testAbs = join(project.root, loc.test_path);
    // The source and the test are the roots of every program of this request (see standInForTest).
    project.roots.push(srcAbs);
    standInForTest(project, testAbs, framework);
    let typed: TypedCall | undefined;
    if (ts && importable) {
      const opts = { fnEnd, testFile: testAbs, style, callee };
      const compute = (): TypedCall | undefined => typedCall(buildProgram(project, [srcAbs]), srcAbs, opts);
      // A lone buffer's arguments depend on nothing else: remembered by the buffer and the target.
      typed =
        src.root === undefined
          ? bufferArgs.get(`${srcAbs}\0${JSON.stringify(opts)}\0${sourceText}`, compute)
          : compute();
    }
    ctx.timer.mark("types");
    // The module's other exports the examples use join the function's import.
    const exampleImports = [...new Set(examples.flatMap((c) => c.imports ?? []))];
    const valueImports = new Map(typed?.valueImports ?? []);
    if (importable && exampleImports.length > 0)
      valueImports.set(loc.specifier, new Set([...(valueImports.get(loc.specifier) ?? []), ...exampleImports]));
    const plan = planTests({
      sig,
      framework,
      ts,
      ...(importable ? { specifier: loc.specifier, importName: exp.name } : {}),
      defaultExport: exp?.isDefault ?? false,
      ctorArgs: typed?.ctorArgs ?? ctorArgs,
      isStatic,
      ...(throws !== undefined ? { throws } : {}),
      notes,
      ...(typed ? { args: typed.args, typeImports: typed.typeImports } : {}),
      ...(typed || valueImports.size > 0 ? { valueImports } : {}),
      examples,
      guards,
    });
    // Without an example stating the value: what the function does today, observed in the sandbox.
    const obs =
      src.root !== undefined && importable
        ? await observeBehaviour(plan, ctx, {
            root: src.root,
            project,
            framework,
            testPath: loc.test_path,
            effects,
            base: typed?.args ?? [],
            ...(ts && typed ? { typed: { srcAbs, opts: { fnEnd, testFile: testAbs, style, callee } } } : {}),
            name: exp.name,
            arity: sig.params.length,
            runTimeoutMs: constraints.run_timeout_ms,
          })
        : { status: "not-run" as const, cases: [], notes: [] };
    notes.push(...obs.notes);
    // With a model: its proposals join the cases, kept only if they typecheck and pass (see model.ts).
    let proposed = 0;
    if (host?.ready && importable && (!isMethod || isStatic)) {
      const calleeText = isMethod ? `${exp.name}.${sig.name}` : exp.name;
      const titles = new Set(plan.cases.map((c) => c.title));
      const proposals = (
        await modelProposals(
          host,
          fnSource,
          calleeText,
          sig.async,
          Math.min(MODEL_LIMIT_MS, ctx.remainingMs() / 4),
          ctx.signal,
        )
      ).filter((c) => !titles.has(c.title));
      proposed = proposals.length;
      plan.cases.push(...proposals);
      ctx.timer.mark("model");
    }
    const runTimeoutMs = Math.min(
      constraints.run_timeout_ms ?? DEFAULT_RUN_TIMEOUT_MS,
      Math.max(0, ctx.remainingMs() - RUN_MARGIN_MS),
    );
    const checked = await checkPlan(plan, {
      project,
      testFile: testAbs,
      testPath: loc.test_path,
      ts,
      runTimeoutMs,
      signal: ctx.signal,
      ...(src.root !== undefined ? { root: src.root } : {}),
      ...(obs.ran ? { ran: obs.ran } : {}),
    });
    project.overlay.clear();
    // A placeholder that pins nothing is never kept as a test: a marked it.skip with the reason.
    checked.keep = finishStubs(
      plan,
      checked.keep,
      obs.reason ??
        (checked.checks.skipped.run !== undefined
          ? `not pinned: not run (${checked.checks.skipped.run})`
          : "not pinned: its result is not plain data; assert what matters by hand"),
    );
    ctx.timer.mark("check");
    const firstDrop = checked.verdicts.find((v) => v.outcome === "dropped");
    if (firstDrop) plan.emptyReason = firstDrop.reason;
    const text = assemble(plan, checked.keep, checked.madeTodo);
    const testDialect = dialectOf(undefined, loc.test_path);
    let content: string;
    try {
      content = await formatTest(text, testDialect.language === "typescript");
      parseProgram(content, testDialect, loc.test_path);
    } catch (err) {
      throw new AipError(
        "AIP_ERR_SYNTAX",
        `The generated test for ${sig.name} does not parse: ${(err as Error).message.split("\n")[0]}`,
      );
    }
    ctx.timer.mark("format");
    const valueKinds = new Set(["example", "value", "throws", "model", "observed"]);
    return {
      test_path: loc.test_path,
      framework,
      content,
      signature: sig,
      import: importable ? { specifier: loc.specifier, name: exp.name, default: exp.isDefault } : null,
      notes,
      tests: {
        kept: checked.keep.length,
        todo: checked.madeTodo.length,
        dropped: checked.verdicts.filter((v) => v.outcome === "dropped").length,
        value_assertions: checked.keep.filter((c) => valueKinds.has(c.kind)).length,
        from_examples: checked.keep.filter((c) => c.kind === "example").length,
        observed: checked.keep.filter((c) => c.kind === "observed").length,
        stubs: plan.stubs?.length ?? 0,
        verdicts: checked.verdicts,
      },
      checks: checked.checks,
      ...(host?.ready ? { model: { proposed, kept: checked.keep.filter((c) => c.kind === "model").length } } : {}),
      ...partialFields(parsed),
    };
  });
}

/**
 * The observation step: inputs from the types, the code and the workspace's calls, run in the
 * sandbox (characterize.ts); the plan's placeholder becomes the observed cases. Not run when the
 * request has no time left for it.
 */
async function observeBehaviour(
  plan: TestPlan,
  ctx: HandlerContext,
  o: {
    root: string;
    project: CheckProject;
    framework: Framework;
    testPath: string;
    effects: ReturnType<typeof effectsOf>;
    base: string[];
    /** The typed call's file and options, for inputs from the types (TypeScript only). */
    typed?: { srcAbs: string; opts: TypedOptions };
    name: string;
    arity: number;
    runTimeoutMs: number | undefined;
  },
): Promise<Observation> {
  const observeMs = Math.min(
    OBSERVE_LIMIT_MS,
    o.runTimeoutMs ?? DEFAULT_RUN_TIMEOUT_MS,
    Math.max(0, ctx.remainingMs() / 3),
  );
  if (observeMs <= 0) return { status: "not-run", cases: [], notes: [] };
  const sites = callSites(workspaceFiles(o.project), o.name, o.arity);
  const inputs =
    o.typed && o.project.program
      ? inputVectors(o.project.program, o.typed.srcAbs, o.typed.opts, o.base, sites)
      : undefined;
  ctx.timer.mark("inputs");
  if (inputs) {
    mergeImports(plan.typeImports, inputs.typeImports);
    mergeImports((plan.valueImports ??= new Map()), inputs.valueImports);
  }
  const obs = await characterizePlan(plan, {
    root: o.root,
    framework: o.framework,
    testPath: o.testPath,
    effects: o.effects,
    vectors: inputs?.vectors ?? [o.base, ...sites.map((x) => x.args)],
    resultArgs: inputs?.resultArgs ?? [],
    timeoutMs: observeMs,
    signal: ctx.signal,
  });
  ctx.timer.mark("observe");
  return obs;
}

/** The workspace's source files (not declarations) with their text, for call sites of the function. */
function workspaceFiles(project: CheckProject): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const f of project.fileNames) {
    if (/\.d\.[cm]?ts$/.test(f) || f.includes("/node_modules/")) continue;
    const text = readWorkspaceText(project, f);
    if (text !== undefined) out.push({ path: relative(project.root, f), text });
    if (out.length >= 400) break;
  }
  return out;
}

function mergeImports(into: Map<string, Set<string>>, from: Map<string, Set<string>>): void {
  for (const [spec, names] of from) {
    const set = into.get(spec) ?? new Set<string>();
    for (const n of names) set.add(n);
    into.set(spec, set);
  }
}
