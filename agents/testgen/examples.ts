/**
 * JSDoc `@example` blocks that state a result become assertions (docs/agents.md, "testgen"):
 *
 *     camelCase("foo-bar") // => "fooBar"
 *     add(1, 2); // returns 3
 *     console.log(add(1, 2)); // 3
 *
 * A line counts when its code is a call of the function under test (possibly through `console.log`,
 * `await`, or `const x =`) and a comment after it (or on the next line, alone) states the value as a
 * literal: a string, number, boolean, null, undefined, NaN, an array or an object of those. Arguments
 * may only be literals too (and a few well-known globals), so that the test needs nothing the example
 * left out. Everything else in the example is ignored.
 */
import ts from "typescript";

export interface ExampleCase {
  /** The call as written, without `await` (`camelCase("foo-bar")`). */
  call: string;
  /** The expected value, as a source expression (`"fooBar"`). */
  expected: string;
  /** How to compare: `toBe` for primitives, `toEqual` for arrays and objects, or the special matchers. */
  matcher: "toBe" | "toEqual" | "toBeUndefined" | "toBeNull" | "toBeNaN";
  /** 1-based line of the example in the doc comment. */
  line: number;
}

/** Globals an example's arguments may name. */
const GLOBALS = new Set([
  "undefined",
  "NaN",
  "Infinity",
  "Math",
  "JSON",
  "Number",
  "String",
  "Boolean",
  "Array",
  "Object",
  "Date",
  "RegExp",
  "Symbol",
  "Map",
  "Set",
  "BigInt",
]);

/** The `@example` blocks of a doc comment's text (`comment.value`), fences and gutters removed, with their first line. */
export function exampleBlocks(commentValue: string): { text: string; line: number }[] {
  const lines = commentValue.split("\n").map((l) => l.replace(/^\s*\*+ ?/, "").replace(/\s+$/, ""));
  const out: { text: string; line: number }[] = [];
  let cur: string[] | undefined;
  let start = 0;
  const flush = (): void => {
    if (cur) out.push({ text: cur.filter((l) => !/^\s*```/.test(l)).join("\n"), line: start });
    cur = undefined;
  };
  let inFence = false;
  lines.forEach((l, i) => {
    if (/^\s*```/.test(l)) inFence = !inFence;
    const tag = !inFence && /^\s*@(\w+)/.exec(l);
    if (tag) {
      flush();
      if (tag[1] === "example") {
        cur = [l.replace(/^\s*@example\s*/, "")];
        start = i + 1;
      }
      return;
    }
    cur?.push(l);
  });
  flush();
  return out;
}

/** The stated result in a trailing comment: `=> v`, `returns v`, `→ v`, or (after console.log) the bare value. */
function statedValue(comment: string, bare: boolean): string | undefined {
  const c = comment.trim();
  const m = /^(?:=>|->|→|returns?:?|result:?|output:?|gives:?|evaluates to:?)\s*(.+)$/i.exec(c);
  if (m) return m[1]!.trim();
  return bare ? c : undefined;
}

/** A literal (recursively) as TypeScript sees it; undefined when `text` is anything else. */
function literal(text: string): ts.Expression | undefined {
  const sf = ts.createSourceFile("v.ts", `(${text});`, ts.ScriptTarget.Latest, false);
  if ((sf as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length > 0) return undefined;
  const st = sf.statements[0];
  if (sf.statements.length !== 1 || !st || !ts.isExpressionStatement(st)) return undefined;
  let e = st.expression;
  while (ts.isParenthesizedExpression(e)) e = e.expression;
  return isLiteral(e, new Set()) ? e : undefined;
}

function isLiteral(e: ts.Node, allowed: Set<string>): boolean {
  if (
    ts.isStringLiteral(e) ||
    ts.isNumericLiteral(e) ||
    ts.isBigIntLiteral(e) ||
    ts.isNoSubstitutionTemplateLiteral(e) ||
    e.kind === ts.SyntaxKind.TrueKeyword ||
    e.kind === ts.SyntaxKind.FalseKeyword ||
    e.kind === ts.SyntaxKind.NullKeyword
  )
    return true;
  if (ts.isIdentifier(e))
    return e.text === "undefined" || e.text === "NaN" || e.text === "Infinity" || allowed.has(e.text);
  if (ts.isPrefixUnaryExpression(e))
    return (
      (e.operator === ts.SyntaxKind.MinusToken || e.operator === ts.SyntaxKind.PlusToken) &&
      isLiteral(e.operand, allowed)
    );
  if (ts.isArrayLiteralExpression(e)) return e.elements.every((x) => isLiteral(x, allowed));
  if (ts.isObjectLiteralExpression(e))
    return e.properties.every(
      (p) =>
        ts.isPropertyAssignment(p) &&
        (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name) || ts.isNumericLiteral(p.name)) &&
        isLiteral(p.initializer, allowed),
    );
  if (ts.isParenthesizedExpression(e)) return isLiteral(e.expression, allowed);
  return false;
}

/** Arguments may also use a few globals (`new Date(0)`, `Math.PI`, `[1, 2].map(...)` is refused: no functions). */
function isSafeArgument(e: ts.Node): boolean {
  if (isLiteral(e, GLOBALS)) return true;
  if (ts.isPropertyAccessExpression(e)) return ts.isIdentifier(e.expression) && GLOBALS.has(e.expression.text);
  if (ts.isNewExpression(e) || ts.isCallExpression(e)) {
    const callee = e.expression;
    const known =
      (ts.isIdentifier(callee) && GLOBALS.has(callee.text)) ||
      (ts.isPropertyAccessExpression(callee) &&
        ts.isIdentifier(callee.expression) &&
        GLOBALS.has(callee.expression.text));
    return known && (e.arguments ?? []).every(isSafeArgument);
  }
  if (ts.isArrayLiteralExpression(e)) return e.elements.every(isSafeArgument);
  if (ts.isObjectLiteralExpression(e))
    return e.properties.every((p) => ts.isPropertyAssignment(p) && isSafeArgument(p.initializer));
  if (ts.isRegularExpressionLiteral(e)) return true;
  return false;
}

function matcherFor(e: ts.Expression): ExampleCase["matcher"] {
  if (ts.isIdentifier(e) && e.text === "undefined") return "toBeUndefined";
  if (ts.isIdentifier(e) && e.text === "NaN") return "toBeNaN";
  if (e.kind === ts.SyntaxKind.NullKeyword) return "toBeNull";
  if (ts.isArrayLiteralExpression(e) || ts.isObjectLiteralExpression(e)) return "toEqual";
  return "toBe";
}

/** The call of `callee` in `code` (`f(x)`, `await f(x)`, `console.log(f(x))`, `const y = f(x)`), and whether it was logged. */
function callIn(code: string, callee: string): { call: string; logged: boolean } | undefined {
  const sf = ts.createSourceFile("e.ts", code, ts.ScriptTarget.Latest, true);
  if ((sf as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length > 0) return undefined;
  const st = sf.statements[0];
  if (sf.statements.length !== 1 || !st) return undefined;
  let e: ts.Expression | undefined;
  if (ts.isExpressionStatement(st)) e = st.expression;
  else if (ts.isVariableStatement(st) && st.declarationList.declarations.length === 1)
    e = st.declarationList.declarations[0]!.initializer;
  if (!e) return undefined;
  let logged = false;
  const unwrap = (x: ts.Expression): ts.Expression => {
    while (ts.isParenthesizedExpression(x) || ts.isAwaitExpression(x)) x = x.expression;
    return x;
  };
  e = unwrap(e);
  if (
    ts.isCallExpression(e) &&
    e.expression.getText(sf) === "console.log" &&
    e.arguments.length === 1 &&
    e.arguments[0] !== undefined
  ) {
    logged = true;
    e = unwrap(e.arguments[0]);
  }
  if (!ts.isCallExpression(e) || e.expression.getText(sf) !== callee) return undefined;
  if (e.typeArguments) return undefined;
  if (!e.arguments.every(isSafeArgument)) return undefined;
  return { call: e.getText(sf), logged };
}

/** Split `code // comment` at the last `//` outside strings (a cheap scan; template literals count as strings). */
function splitComment(line: string): { code: string; comment?: string } {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'" || ch === "`") quote = ch;
    else if (ch === "/" && line[i + 1] === "/") return { code: line.slice(0, i).trim(), comment: line.slice(i + 2) };
  }
  return { code: line.trim() };
}

/**
 * The assertions an `@example` block states for calls of `callee` (`fn` or `Class.fn` for a static method).
 * `commentValue` is the doc comment's `value` (between `/*` and `*\/`).
 */
export function exampleCases(commentValue: string, callee: string): ExampleCase[] {
  const out: ExampleCase[] = [];
  const seen = new Set<string>();
  for (const block of exampleBlocks(commentValue)) {
    const lines = block.text.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const { code, comment } = splitComment(lines[i]!);
      if (code === "" || !code.includes(callee)) continue;
      let stated = comment;
      // The result on the next line, alone: `f(x)\n// => y`.
      if (stated === undefined || stated.trim() === "") {
        const next = lines[i + 1] !== undefined ? splitComment(lines[i + 1]!) : undefined;
        if (next && next.code === "" && next.comment !== undefined) stated = next.comment;
      }
      if (stated === undefined) continue;
      const found = callIn(code.replace(/;$/, ""), callee);
      if (!found) continue;
      const value = statedValue(stated, found.logged);
      if (value === undefined) continue;
      const expr = literal(value.replace(/;$/, ""));
      if (!expr) continue;
      const key = `${found.call} ${value}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({
        call: found.call,
        expected: value.replace(/;$/, ""),
        matcher: matcherFor(expr),
        line: block.line + i,
      });
    }
  }
  return out;
}

/** One assertion per framework: `expect(call).toBe(v)`, or node:assert. */
export function assertionFor(c: ExampleCase, framework: "vitest" | "jest" | "node:test", awaited: boolean): string {
  const call = awaited ? `await ${c.call}` : c.call;
  if (framework === "node:test") {
    switch (c.matcher) {
      case "toBeUndefined":
        return `assert.equal(${call}, undefined);`;
      case "toBeNull":
        return `assert.equal(${call}, null);`;
      case "toBeNaN":
        return `assert.ok(Number.isNaN(${call}));`;
      case "toEqual":
        return `assert.deepStrictEqual(${call}, ${c.expected});`;
      default:
        return `assert.equal(${call}, ${c.expected});`;
    }
  }
  const arg = c.matcher === "toBe" || c.matcher === "toEqual" ? c.expected : "";
  return `expect(${call}).${c.matcher}(${arg});`;
}
