/** The test file text for one target, per framework (before formatting). */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import type { FRAMEWORKS } from "../../protocol/contract/actions.js";
import type { Node } from "../lib/code/parse.js";
import { paramInfo, type SignatureInfo } from "../lib/code/signature.js";
import { walk } from "../lib/code/walk.js";
import { BUILTIN_ERRORS, assertionFor, type ExampleCase } from "./examples.js";
import type { GuardCase } from "./guards.js";
import { edgeCases, sampleArgs } from "./values.js";

export type Framework = (typeof FRAMEWORKS)[number];

export interface RenderInput {
  sig: SignatureInfo;
  framework: Framework;
  ts: boolean;
  /** The import specifier, or undefined when the function cannot be imported. */
  specifier?: string;
  /** The name to import: the function, or the class for a method; "default" for default exports. */
  importName?: string;
  defaultExport: boolean;
  /** Constructor parameters of the class, for methods. */
  ctorArgs?: string[];
  isStatic: boolean;
  /** The error class thrown by the body (`throw new RangeError(…)` → "RangeError"), or "" for a plain throw; undefined: never throws. */
  throws?: string;
  notes: string[];
  /** Happy-path arguments from the checker (else from the annotation text). */
  args?: string[];
  /** Type-only imports the arguments need (specifier → names). */
  typeImports?: Map<string, Set<string>>;
  /** Value imports the arguments need (classes they construct; specifier → names). */
  valueImports?: Map<string, Set<string>>;
  /** Results stated by the doc comment's `@example` blocks. */
  examples?: ExampleCase[];
  /** Inputs the body visibly rejects. */
  guards?: GuardCase[];
}

/** One `it(…)` of the file; `kind` says what it asserts. */
export interface TestCase {
  title: string;
  /** The statements inside the test. */
  body: string;
  async: boolean;
  kind: "example" | "value" | "throws" | "smoke" | "model" | "observed";
}

/** A case left as `it.skip` with its call and the reason it asserts nothing (see stubs.ts). */
export interface StubCase {
  title: string;
  reason: string;
  body: string;
  async: boolean;
}

/** A test file as parts: the cases can be dropped or turned into `it.todo` after checking, then assembled. */
export interface TestPlan {
  framework: Framework;
  /** The import of the code under test (undefined when it cannot be imported). */
  importLine?: string;
  typeImports: Map<string, Set<string>>;
  /** Classes the arguments construct (specifier → names), besides the import of the code under test. */
  valueImports?: Map<string, Set<string>>;
  /** The name the import of the code under test binds. */
  importName?: string;
  notes: string[];
  describe: string;
  cases: TestCase[];
  /** `it.todo` titles (edge cases the types suggest, what could not be generated). */
  todos: string[];
  /** A comment put first in the describe block (an unexported function). */
  preamble?: string;
  /** Why no case was kept, for the `it.todo` that stands in for them (a suite without a test fails to load). */
  emptyReason?: string;
  /** Cases that pin nothing (no value could be observed or stated), written as `it.skip` with the reason. */
  stubs?: StubCase[];
}

/** What the function body throws, ignoring nested functions. */
export function thrownBy(fn: Node): string | undefined {
  let thrown: string | undefined;
  const body = (fn as { body?: Node | null }).body;
  if (!body) return undefined;
  walk(body, (n) => {
    if (
      n !== body &&
      (n.type === "FunctionDeclaration" || n.type === "FunctionExpression" || n.type === "ArrowFunctionExpression")
    )
      return false;
    if (n.type === "ThrowStatement" && thrown === undefined) {
      const arg = n.argument as TSESTree.Expression;
      thrown = arg.type === "NewExpression" && arg.callee.type === "Identifier" ? arg.callee.name : "";
    }
    return true;
  });
  return thrown;
}

/** Constructor parameters → sample arguments. */
export function constructorArgs(cls: Node, source: string, ts: boolean): string[] {
  const body = (cls as TSESTree.ClassDeclaration).body.body;
  const ctor = body.find(
    (m): m is TSESTree.MethodDefinition => m.type === "MethodDefinition" && m.kind === "constructor",
  );
  return ctor
    ? sampleArgs(
        ctor.value.params.map((p) => paramInfo(p, source)),
        ts,
      )
    : [];
}

/** The cases for one target (before checking). */
export function planTests(input: RenderInput): TestPlan {
  const { sig, framework } = input;
  const node = framework === "node:test";
  const importName = input.importName ?? sig.name;
  const importLine =
    input.specifier === undefined
      ? undefined
      : input.defaultExport
        ? `import ${importName} from ${JSON.stringify(input.specifier)};`
        : `import { ${importName} } from ${JSON.stringify(input.specifier)};`;
  const args = (input.args ?? sampleArgs(sig.params, input.ts)).join(", ");
  const isMethod = sig.class !== undefined;
  let setup = "";
  let callee = sig.name;
  if (isMethod) {
    if (input.isStatic) callee = `${importName}.${sig.name}`;
    else {
      setup = `const instance = new ${importName}(${(input.ctorArgs ?? []).join(", ")});\n`;
      callee = `instance.${sig.name}`;
    }
  }
  const accessor = sig.kind === "getter";
  const call = accessor ? callee : `${callee}(${args})`;
  const title = isMethod ? `${sig.class}.${sig.name}` : sig.name;
  const plan: TestPlan = {
    framework,
    ...(importLine !== undefined ? { importLine } : {}),
    typeImports: input.typeImports ?? new Map(),
    ...(input.valueImports ? { valueImports: input.valueImports } : {}),
    ...(input.specifier !== undefined ? { importName } : {}),
    notes: input.notes,
    describe: title,
    cases: [],
    todos: [],
  };
  if (input.specifier === undefined) {
    plan.preamble = `// TODO: ${sig.name} is not exported, so this test cannot import it. Export it or test it through its caller.`;
    plan.todos.push(`${title}: export it, then test the happy path`);
    plan.todos.push(...edgeCases(sig.params));
    return plan;
  }
  const titles = new Set<string>();
  const add = (c: TestCase): void => {
    let t = c.title;
    for (let i = 2; titles.has(t); i++) t = `${c.title} (${i})`;
    titles.add(t);
    plan.cases.push({ ...c, title: t });
  };
  // The documented examples first: they state the values.
  const exampleCallee = isMethod ? (input.isStatic ? `${sig.class}.${sig.name}` : undefined) : sig.name;
  // A guard's case names the error class; an example's bare "throws" for the same call gives way to it.
  const guardCalls = new Set(
    (input.throws !== undefined ? (input.guards ?? []) : []).map((g) => {
      const a = (input.args ?? sampleArgs(sig.params, input.ts)).slice();
      while (a.length < g.param) a.push("undefined");
      a[g.param] = g.value;
      return `${callee}(${a.join(", ")})`;
    }),
  );
  for (const ex of exampleCallee !== undefined ? (input.examples ?? []) : []) {
    if (ex.matcher === "toThrow" && ex.expected === "" && guardCalls.has(ex.call)) continue;
    const shown = ex.call.length > 60 ? `${ex.call.slice(0, 57)}...` : ex.call;
    const stated =
      ex.matcher === "toThrow" ? `throws${ex.expected ? ` ${ex.expected}` : ""}` : ex.expected.replace(/\s+/g, " ");
    add({
      title: `example: ${shown.replace(/\s+/g, " ")} → ${stated.length > 40 ? `${stated.slice(0, 37)}...` : stated}`,
      body: assertionFor(ex, framework, sig.async),
      async: sig.async || ex.awaited === true || ex.asyncSetup === true,
      kind: "example",
    });
  }
  const returnsVoid =
    sig.returns !== undefined &&
    /^(void|undefined|Promise<void>|Promise<undefined>)$/.test(sig.returns.replace(/\s+/g, ""));
  const check = (v: string): string => {
    if (returnsVoid) return node ? `assert.equal(${v}, undefined);` : `expect(${v}).toBeUndefined();`;
    return node
      ? `assert.notEqual(${v}, undefined); // TODO: assert the expected value`
      : `expect(${v}).toBeDefined(); // TODO: assert the expected value`;
  };
  add({
    title: sig.async ? "resolves for typical input" : "returns a value for typical input",
    body: `${setup}const result = ${sig.async ? "await " : ""}${call};\n${check("result")}`,
    async: sig.async,
    kind: returnsVoid ? "value" : "smoke",
  });
  if (input.throws !== undefined && !accessor) {
    const guards = input.guards ?? [];
    for (const g of guards) {
      const a = (input.args ?? sampleArgs(sig.params, input.ts)).slice();
      while (a.length < g.param) a.push("undefined");
      a[g.param] = g.value;
      const badCall = `${callee}(${a.join(", ")})`;
      // The documented example already states this throw.
      if ((input.examples ?? []).some((e) => e.matcher === "toThrow" && e.expected !== "" && e.call === badCall))
        continue;
      // Only built-in error classes are named in the assertion: others would need an import of their own.
      const cls = BUILTIN_ERRORS.has(g.thrown) ? g.thrown : "";
      const what = cls ? `${/^[AEIOU]/.test(cls) ? "an" : "a"} ${cls}` : "an error";
      const cond = g.condition.length > 50 ? `${g.condition.slice(0, 47)}...` : g.condition;
      let body: string;
      if (sig.async)
        body = node
          ? `await assert.rejects(${badCall}${cls ? `, ${cls}` : ""});`
          : `await expect(${badCall}).rejects.toThrow(${cls});`;
      else
        body = node
          ? `assert.throws(() => ${badCall}${cls ? `, ${cls}` : ""});`
          : `expect(() => ${badCall}).toThrow(${cls});`;
      add({
        title: `${sig.async ? "rejects with" : "throws"} ${what} when ${cond}`,
        body: `${setup}${body}`,
        async: sig.async,
        kind: "throws",
      });
    }
    if (guards.length === 0) {
      const what = input.throws ? `${/^[AEIOU]/.test(input.throws) ? "an" : "a"} ${input.throws}` : "an error";
      plan.todos.push(`${sig.async ? "rejects with" : "throws"} ${what}: find an input that makes it throw`);
    }
  }
  plan.todos.push(...edgeCases(sig.params));
  return plan;
}

/** The test file as unformatted source: the kept cases, then `it.todo`s (`madeTodo` with their reasons). */
export function assemble(
  plan: TestPlan,
  keep: TestCase[],
  madeTodo: { title: string; reason: string }[] = [],
  recorder?: string,
): string {
  const lines: string[] = [];
  if (plan.framework === "vitest") {
    const used = ["describe", "expect", "it"].filter(
      (n) => n !== "expect" || keep.some((c) => c.body.includes("expect(")),
    );
    lines.push(`import { ${used.join(", ")} } from "vitest";`);
  }
  const stubs = plan.stubs ?? [];
  const bodies = [...keep, ...stubs].map((c) => c.body).join("\n");
  if (plan.framework === "node:test") {
    lines.push('import { describe, it } from "node:test";');
    if (/\bassert\./.test(bodies)) lines.push('import assert from "node:assert/strict";');
  }
  const usedIn = (names: Iterable<string>): string[] =>
    [...names].filter((n) => new RegExp(`\\b${n}\\b`).test(bodies)).sort();
  // Without a case left, the import would be unused (an error under noUnusedLocals).
  const main = plan.importLine !== undefined && keep.length + stubs.length > 0 ? plan.importLine : undefined;
  // A class both constructed and named in a cast is imported once, as a value; the code under test is already
  // imported, and a class from its module joins that import.
  const values = new Set<string>(main !== undefined ? [plan.importName ?? ""] : []);
  const valueLines: string[] = [];
  let mainLine = main;
  for (const [spec, names] of plan.valueImports ?? []) {
    const used = usedIn(names).filter((n) => !values.has(n));
    used.forEach((n) => values.add(n));
    if (used.length === 0) continue;
    const named = mainLine !== undefined ? /^import \{ (.+) \} from (".*");$/.exec(mainLine) : null;
    if (named && named[2] === JSON.stringify(spec))
      mainLine = `import { ${[named[1]!, ...used].join(", ")} } from ${named[2]};`;
    else valueLines.push(`import { ${used.join(", ")} } from ${JSON.stringify(spec)};`);
  }
  if (mainLine !== undefined) lines.push(mainLine);
  lines.push(...valueLines);
  for (const [spec, names] of plan.typeImports) {
    const used = usedIn(names).filter((n) => !values.has(n));
    if (used.length) lines.push(`import type { ${used.join(", ")} } from ${JSON.stringify(spec)};`);
  }
  for (const n of plan.notes) lines.push(`// NOTE: ${n}`);
  if (recorder !== undefined) lines.push(recorder);
  lines.push("");
  const todo = (t: string): string => `it.todo(${JSON.stringify(t)});`;
  const body: string[] = [];
  if (plan.preamble) body.push(plan.preamble);
  for (const c of keep) body.push(`it(${JSON.stringify(c.title)}, ${c.async ? "async " : ""}() => {\n${c.body}\n});`);
  for (const s of stubs)
    body.push(
      `it.skip(${JSON.stringify(`${s.title} (${s.reason})`)}, ${s.async ? "async " : ""}() => {\n${s.body}\n});`,
    );
  for (const t of madeTodo) body.push(todo(`${t.title} (${t.reason})`));
  for (const t of plan.todos) body.push(todo(t));
  // Runners reject a file without a single test ("No test found in suite"): a todo says why.
  if (keep.length + stubs.length + madeTodo.length + plan.todos.length === 0)
    body.push(todo(`${plan.describe}: no generated case was kept${plan.emptyReason ? ` (${plan.emptyReason})` : ""}`));
  lines.push(`describe(${JSON.stringify(plan.describe)}, () => {\n${body.join("\n\n")}\n});`);
  return lines.join("\n") + "\n";
}

/** The test file as unformatted source, every case kept. */
export function renderTest(input: RenderInput): string {
  const plan = planTests(input);
  return assemble(plan, plan.cases);
}
