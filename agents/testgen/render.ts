/** The test file text for one target, per framework (before formatting). */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import type { FRAMEWORKS } from "../../protocol/actions.js";
import type { Node } from "../lib/code/parse.js";
import { paramInfo, type SignatureInfo } from "../lib/code/signature.js";
import { walk } from "../lib/code/walk.js";
import { edgeCases, sampleArgs } from "./values.js";

const BUILTIN_ERRORS = new Set([
  "Error",
  "TypeError",
  "RangeError",
  "SyntaxError",
  "ReferenceError",
  "EvalError",
  "URIError",
  "AggregateError",
]);

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

/** The test file as unformatted source. */
export function renderTest(input: RenderInput): string {
  const { sig, framework } = input;
  const node = framework === "node:test";
  const lines: string[] = [];
  if (framework === "vitest") lines.push('import { describe, expect, it } from "vitest";');
  if (node) lines.push('import { describe, it } from "node:test";', 'import assert from "node:assert/strict";');
  const importName = input.importName ?? sig.name;
  if (input.specifier !== undefined) {
    lines.push(
      input.defaultExport
        ? `import ${importName} from ${JSON.stringify(input.specifier)};`
        : `import { ${importName} } from ${JSON.stringify(input.specifier)};`,
    );
  }
  for (const n of input.notes) lines.push(`// NOTE: ${n}`);
  lines.push("");
  const args = sampleArgs(sig.params, input.ts).join(", ");
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
  const todo = (t: string): string => `it.todo(${JSON.stringify(t)});`;
  const body: string[] = [];
  if (input.specifier === undefined) {
    body.push(
      `// TODO: ${sig.name} is not exported, so this test cannot import it. Export it or test it through its caller.`,
    );
    body.push(todo(`${title}: export it, then test the happy path`));
  } else {
    const returnsVoid =
      sig.returns !== undefined &&
      /^(void|undefined|Promise<void>|Promise<undefined>)$/.test(sig.returns.replace(/\s+/g, ""));
    const check = (v: string): string => {
      if (returnsVoid) return node ? `assert.equal(${v}, undefined);` : `expect(${v}).toBeUndefined();`;
      return node
        ? `assert.notEqual(${v}, undefined); // TODO: assert the expected value`
        : `expect(${v}).toBeDefined(); // TODO: assert the expected value`;
    };
    if (sig.async) {
      body.push(
        `it("resolves for typical input", async () => {\n${setup}const result = await ${call};\n${check("result")}\n});`,
      );
    } else {
      body.push(
        `it("returns a value for typical input", () => {\n${setup}const result = ${call};\n${check("result")}\n});`,
      );
    }
    if (input.throws !== undefined && !accessor) {
      // Only built-in error classes are named in the assertion: others would need an import of their own.
      const cls = BUILTIN_ERRORS.has(input.throws) ? input.throws : "";
      const what = input.throws ? `${/^[AEIOU]/.test(input.throws) ? "an" : "a"} ${input.throws}` : "an error";
      const badArgs = "/* TODO: arguments that make it throw */";
      const badCall = `${callee}(${badArgs})`;
      if (sig.async) {
        body.push(
          node
            ? `it("rejects with ${what} on invalid input", async () => {\n${setup}await assert.rejects(${badCall}${cls ? `, ${cls}` : ""});\n});`
            : `it("rejects with ${what} on invalid input", async () => {\n${setup}await expect(${badCall}).rejects.toThrow(${cls});\n});`,
        );
      } else {
        body.push(
          node
            ? `it("throws ${what} on invalid input", () => {\n${setup}assert.throws(() => ${badCall}${cls ? `, ${cls}` : ""});\n});`
            : `it("throws ${what} on invalid input", () => {\n${setup}expect(() => ${badCall}).toThrow(${cls});\n});`,
        );
      }
    }
  }
  for (const e of edgeCases(sig.params)) body.push(todo(e));
  lines.push(`describe(${JSON.stringify(title)}, () => {\n${body.join("\n\n")}\n});`);
  return lines.join("\n") + "\n";
}
