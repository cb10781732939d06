/**
 * Inputs read off the function's own code (docs/agents.md, "testgen", "Observed behaviour"), as
 * fuzzers build a dictionary from a program's constants: the values its branches compare against.
 * A string it compares with `===` or a `case` is tried as it is; one it searches for (`startsWith`,
 * `endsWith`, `includes`, `split`, …, or an element of an array it searches) is tried inside a longer
 * string, so the search finds it; a regular expression it tests gives a string that matches; a
 * number it compares with gives that number and its neighbours (an off-by-one shows there); a key it
 * tests with `in` or `hasOwn` gives an object with that key, a built-in class it tests with
 * `instanceof` an instance of it. The body is read with the same-file
 * functions and constants it names, two levels deep, so a helper's branches count too.
 */
import type * as TS from "typescript";
import { ts } from "../lib/code/typescript.js";

/** Values of each kind kept, at most (the first ones found, in the code's order). */
const MAX_VALUES = 6;
/** Same-file declarations followed from the function, and how deep. */
const MAX_FOLLOWED = 12;
const MAX_DEPTH = 2;
/** A length compared with above this gives no input (a string or array that long says nothing more). */
const MAX_LENGTH = 16;
/** A regular expression's sample longer than this is not used. */
const MAX_SAMPLE = 24;

export interface CodeValues {
  /** String arguments as source text (JSON), the exact ones first. */
  strings: string[];
  /** Number arguments as source text. */
  numbers: string[];
  /**
   * Lengths the code compares a `.length` or `.size` with (`xs.length > 1` gives 1 and 2): strings and
   * arrays of those lengths are tried, where a one-off in the bound shows.
   */
  lengths: number[];
  /** Objects with a key the code tests for, as source text (`{ [Symbol.iterator]: 1 }`). */
  objects: string[];
  /** Instances of the built-in classes the code tests with `instanceof`, by class name. */
  instances: Map<string, string>;
}

/** Built-in classes whose instance is built the same every time, and how (`x instanceof FormData`). */
const INSTANCES: Record<string, string> = {
  // With an entry: the code's loop over its entries runs.
  FormData: '(() => { const f = new FormData(); f.append("a", "b"); return f; })()',
  URLSearchParams: 'new URLSearchParams("a=1")',
  Blob: 'new Blob(["ab"])',
  ArrayBuffer: "new ArrayBuffer(2)",
  Uint8Array: "new Uint8Array([1, 2])",
  Map: "new Map([[1, 2]])",
  Set: "new Set([1])",
  Error: 'new Error("e")',
  RegExp: "/a/",
  URL: 'new URL("https://example.com/a")',
  Headers: 'new Headers({ a: "1" })',
};

const SEARCHES = new Set([
  "includes",
  "indexOf",
  "lastIndexOf",
  "split",
  "replace",
  "replaceAll",
  "search",
  "match",
  "matchAll",
]);
let operatorKinds: { compare: Set<TS.SyntaxKind>; order: Set<TS.SyntaxKind> } | undefined;
/** Equality and order operators, by kind: built on first use, since the compiler loads after ready. */
const operators = (): { compare: Set<TS.SyntaxKind>; order: Set<TS.SyntaxKind> } =>
  (operatorKinds ??= {
    compare: new Set([
      ts.SyntaxKind.EqualsEqualsEqualsToken,
      ts.SyntaxKind.ExclamationEqualsEqualsToken,
      ts.SyntaxKind.EqualsEqualsToken,
      ts.SyntaxKind.ExclamationEqualsToken,
    ]),
    order: new Set([
      ts.SyntaxKind.LessThanToken,
      ts.SyntaxKind.LessThanEqualsToken,
      ts.SyntaxKind.GreaterThanToken,
      ts.SyntaxKind.GreaterThanEqualsToken,
    ]),
  });

const strip = (e: TS.Expression): TS.Expression => {
  let x = e;
  while (ts.isParenthesizedExpression(x) || ts.isAsExpression(x) || ts.isSatisfiesExpression(x)) x = x.expression;
  return x;
};

const isString = (e: TS.Node): e is TS.StringLiteral | TS.NoSubstitutionTemplateLiteral =>
  ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e);

/** A number literal's value (`-1` included), or undefined. */
function numberOf(e: TS.Expression): number | undefined {
  const x = strip(e);
  if (ts.isNumericLiteral(x)) return Number(x.text);
  if (ts.isPrefixUnaryExpression(x) && x.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(x.operand))
    return -Number(x.operand.text);
  return undefined;
}

/**
 * A short string that the regular expression matches, or undefined for one this does not read:
 * each atom once (its first alternative, a class's first member), `{n}` n times, `*` and `?` once.
 */
export function sampleOf(pattern: string): string | undefined {
  let out = "";
  let i = 0;
  const ESC: Record<string, string> = { d: "1", w: "a", s: " ", D: "a", W: "-", S: "a", b: "", B: "" };
  const atom = (): string | undefined => {
    const c = pattern[i]!;
    if (c === "\\") {
      const n = pattern[i + 1];
      i += 2;
      if (n === undefined) return undefined;
      if (n in ESC) return ESC[n];
      return /[a-zA-Z0-9]/.test(n) ? undefined : n;
    }
    if (c === "[") {
      const close = pattern.indexOf("]", i + 2);
      if (close < 0 || pattern[i + 1] === "^") return undefined;
      const body = pattern.slice(i + 1, close);
      i = close + 1;
      if (body.startsWith("\\")) return body[1] !== undefined && body[1] in ESC ? ESC[body[1]] : body[1];
      return body[0];
    }
    if (c === "(") {
      // The first alternative of the group, up to its `|` or `)` (no nested groups).
      let j = i + 1;
      if (pattern.startsWith("?:", j)) j += 2;
      else if (pattern[j] === "?") return undefined;
      const end = pattern.indexOf(")", j);
      if (end < 0 || pattern.slice(j, end).includes("(")) return undefined;
      const inner = pattern.slice(j, end).split("|")[0]!;
      i = end + 1;
      return sampleOf(inner);
    }
    if (c === "^" || c === "$") {
      i++;
      return "";
    }
    if (c === ".") {
      i++;
      return "a";
    }
    if ("|)]{}*+?".includes(c)) return undefined;
    i++;
    return c;
  };
  while (i < pattern.length) {
    if (pattern[i] === "|") break;
    const a = atom();
    if (a === undefined) return undefined;
    const q = /^(?:\{(\d+)(?:,\d*)?\}|[*+?])\??/.exec(pattern.slice(i));
    let times = 1;
    if (q) {
      i += q[0].length;
      if (q[1] !== undefined) times = Math.min(Number(q[1]), 4);
    }
    out += a.repeat(times);
    if (out.length > MAX_SAMPLE) return undefined;
  }
  return out;
}

/** The values the function's code compares against (see the module comment). */
export function codeValues(decl: TS.Node, checker: TS.TypeChecker): CodeValues {
  const exact: string[] = [];
  const inside: string[] = [];
  const numbers: number[] = [];
  const lengths: number[] = [];
  const objects: string[] = [];
  const instances = new Map<string, string>();
  const sf = decl.getSourceFile();
  const followed = new Set<TS.Node>([decl]);
  const queue: { node: TS.Node; depth: number }[] = [{ node: decl, depth: 0 }];

  const regexSample = (e: TS.Expression): string | undefined => {
    let x = strip(e);
    if (ts.isIdentifier(x)) {
      const d = checker.getSymbolAtLocation(x)?.valueDeclaration;
      if (d && ts.isVariableDeclaration(d) && d.initializer && d.getSourceFile() === sf) x = strip(d.initializer);
    }
    if (!ts.isRegularExpressionLiteral(x)) return undefined;
    const m = /^\/(.*)\/[a-z]*$/s.exec(x.text);
    return m ? sampleOf(m[1]!) : undefined;
  };
  /** The string elements of an array literal, or of the constants a name or a `a ?? b` stands for. */
  const elements = (e: TS.Expression, hops = 0): string[] => {
    const x = strip(e);
    if (hops > 3) return [];
    if (ts.isArrayLiteralExpression(x)) return x.elements.filter(isString).map((s) => s.text);
    if (
      ts.isBinaryExpression(x) &&
      (x.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken ||
        x.operatorToken.kind === ts.SyntaxKind.BarBarToken)
    )
      return [...elements(x.left, hops + 1), ...elements(x.right, hops + 1)];
    if (ts.isIdentifier(x)) {
      const d = checker.getSymbolAtLocation(x)?.valueDeclaration;
      if (d && ts.isVariableDeclaration(d) && d.initializer && d.getSourceFile() === sf)
        return elements(d.initializer, hops + 1);
    }
    return [];
  };
  const follow = (id: TS.Identifier, depth: number): void => {
    if (depth >= MAX_DEPTH || followed.size >= MAX_FOLLOWED) return;
    const sym = checker.getSymbolAtLocation(id);
    // An overloaded function: the declaration with the body.
    const d =
      sym?.declarations?.find((x) => (ts.isFunctionDeclaration(x) || ts.isMethodDeclaration(x)) && x.body) ??
      sym?.valueDeclaration;
    if (!d || d.getSourceFile() !== sf || followed.has(d)) return;
    const fn =
      ts.isFunctionDeclaration(d) || ts.isMethodDeclaration(d)
        ? d
        : ts.isVariableDeclaration(d) && d.initializer && ts.isFunctionLike(strip(d.initializer))
          ? strip(d.initializer)
          : undefined;
    if (!fn) return;
    followed.add(d);
    queue.push({ node: fn, depth: depth + 1 });
  };

  const visit = (n: TS.Node, depth: number): void => {
    if (ts.isTypeNode(n)) return;
    if (ts.isBinaryExpression(n)) {
      const op = n.operatorToken.kind;
      const l = strip(n.left);
      const r = strip(n.right);
      const { compare, order } = operators();
      if (compare.has(op) || order.has(op)) {
        for (const [lit, other] of [
          [l, r],
          [r, l],
        ] as const) {
          if (ts.isTypeOfExpression(other)) continue;
          if (isString(lit)) exact.push(lit.text);
          const v = numberOf(lit);
          if (v !== undefined && Number.isFinite(v)) numbers.push(...(order.has(op) ? [v, v - 1, v + 1] : [v]));
          // `xs.length > 1`, `s.length === 0`: the length on each side of the bound.
          if (
            v !== undefined &&
            ts.isPropertyAccessExpression(other) &&
            (other.name.text === "length" || other.name.text === "size")
          )
            lengths.push(...(order.has(op) ? [v, v + 1] : [v, v + 1]).filter((n) => n >= 0 && n <= MAX_LENGTH));
        }
      } else if (op === ts.SyntaxKind.InstanceOfKeyword && ts.isIdentifier(r) && Object.hasOwn(INSTANCES, r.text)) {
        instances.set(r.text, INSTANCES[r.text]!);
      } else if (op === ts.SyntaxKind.InKeyword) {
        if (isString(l)) objects.push(`{ ${JSON.stringify(l.text)}: 1 }`);
        else if (ts.isPropertyAccessExpression(l) && ts.isIdentifier(l.expression) && l.expression.text === "Symbol")
          objects.push(`{ [Symbol.${l.name.text}]: 1 }`);
      }
    } else if (ts.isCaseClause(n)) {
      const e = strip(n.expression);
      if (isString(e)) exact.push(e.text);
      const v = numberOf(e);
      if (v !== undefined) numbers.push(v);
    } else if (ts.isCallExpression(n)) {
      const c = n.expression;
      const a0 = n.arguments[0];
      if (ts.isPropertyAccessExpression(c) && a0) {
        const name = c.name.text;
        const a = strip(a0);
        if (isString(a) && a.text !== "") {
          if (name === "startsWith") inside.push(`${a.text}a`);
          else if (name === "endsWith") inside.push(`a${a.text}`);
          else if (SEARCHES.has(name)) inside.push(`a${a.text}b`);
        } else if (name === "test" || name === "exec") {
          const s = regexSample(c.expression);
          if (s !== undefined) inside.push(s);
        } else if (SEARCHES.has(name)) {
          const s = regexSample(a);
          if (s !== undefined) inside.push(s === "" ? s : `a${s}b`);
        }
        // `LIST.includes(x)`: each element of the list is a value the code looks for.
        if (name === "includes" || name === "indexOf") for (const s of elements(c.expression)) inside.push(`a${s}b`);
        if (name === "hasOwn" && n.arguments[1] && isString(strip(n.arguments[1])))
          objects.push(`{ ${JSON.stringify((strip(n.arguments[1]) as TS.StringLiteral).text)}: 1 }`);
      }
      if (ts.isIdentifier(c)) follow(c, depth);
    } else if (ts.isIdentifier(n) && !(ts.isPropertyAccessExpression(n.parent) && n.parent.name === n)) {
      // A helper passed along (`parts.map(upperFirst)`) is followed as a call is.
      follow(n, depth);
    }
    ts.forEachChild(n, (k) => visit(k, depth));
  };
  while (queue.length > 0) {
    const { node, depth } = queue.shift()!;
    ts.forEachChild(node, (k) => visit(k, depth));
  }
  const uniq = <T>(xs: T[]): T[] => [...new Set(xs)];
  return {
    strings: uniq([...exact, ...inside].map((s) => JSON.stringify(s))).slice(0, MAX_VALUES),
    numbers: uniq(numbers.map((v) => (Object.is(v, -0) ? "0" : String(v)))).slice(0, MAX_VALUES),
    lengths: uniq(lengths).slice(0, MAX_VALUES),
    objects: uniq(objects).slice(0, MAX_VALUES),
    instances,
  };
}
