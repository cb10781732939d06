/**
 * Inputs the code visibly rejects (docs/agents.md, "testgen"): a `throw` guarded by an `if` among the
 * function's leading statements, whose condition reads one parameter in a way a literal can satisfy
 * (`!p`, `p === ""`, `p < 0`, `p.length === 0`, `p.length > 10`, `Number.isNaN(p)`, `typeof p !== "string"`
 * for an untyped parameter, and `||` of those). A `toThrow` case is emitted only for such an input.
 */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import type { Node } from "../lib/code/parse.js";
import type { ParamInfo } from "../lib/code/signature.js";

export interface GuardCase {
  /** Index of the parameter the guard reads. */
  param: number;
  /** A value that satisfies the guard's condition, as source text. */
  value: string;
  /** The error class thrown (`RangeError`), or "" when it is not a `new Identifier(…)`. */
  thrown: string;
  /** The condition as written, for the test's title. */
  condition: string;
}

type Expr = TSESTree.Expression;

/** The thrown class of `throw new X(…)`, "" for other throws; undefined when `st` is not (a block of) a throw. */
function throwOf(st: TSESTree.Statement): string | undefined {
  const s = st.type === "BlockStatement" && st.body.length === 1 ? st.body[0]! : st;
  if (s.type !== "ThrowStatement") return undefined;
  const a = s.argument as Expr;
  return a.type === "NewExpression" && a.callee.type === "Identifier" ? a.callee.name : "";
}

function numberOf(e: Expr): number | undefined {
  if (e.type === "Literal" && typeof e.value === "number") return e.value;
  if (
    e.type === "UnaryExpression" &&
    e.operator === "-" &&
    e.argument.type === "Literal" &&
    typeof e.argument.value === "number"
  )
    return -e.argument.value;
  return undefined;
}

const FLIP: Record<string, string> = { "<": ">", ">": "<", "<=": ">=", ">=": "<=", "===": "===", "==": "==" };

/** A number satisfying `x op n`. */
function numberFor(op: string, n: number): number | undefined {
  switch (op) {
    case "<":
      return n - 1;
    case "<=":
    case "===":
    case "==":
      return n;
    case ">":
      return n + 1;
    case ">=":
      return n;
    default:
      return undefined;
  }
}

/** The parameter `e` names (an identifier), as index; or the parameter whose `.length` it reads. */
function paramOf(e: Expr, params: ParamInfo[]): { index: number; length: boolean } | undefined {
  if (e.type === "Identifier") {
    const i = params.findIndex((p) => p.name === e.name && !p.rest);
    return i === -1 ? undefined : { index: i, length: false };
  }
  if (
    e.type === "MemberExpression" &&
    !e.computed &&
    e.property.type === "Identifier" &&
    e.property.name === "length"
  ) {
    const inner = paramOf(e.object as Expr, params);
    return inner && !inner.length ? { index: inner.index, length: true } : undefined;
  }
  return undefined;
}

function kind(p: ParamInfo): "string" | "number" | "array" | "boolean" | "unknown" | "other" {
  const t = (p.type ?? "").replace(/\s+/g, "");
  if (t === "string") return "string";
  if (t === "number") return "number";
  if (t === "boolean") return "boolean";
  if (t === "" || t === "unknown" || t === "any") return "unknown";
  if (/\[\]$|^(readonly)?(Readonly)?Array</.test(t)) return "array";
  return "other";
}

/** A value of parameter `p` that makes `cond` true; undefined when none is evident. */
function satisfy(cond: Expr, params: ParamInfo[]): { param: number; value: string } | undefined {
  if (cond.type === "LogicalExpression" && cond.operator === "||")
    return satisfy(cond.left, params) ?? satisfy(cond.right, params);
  if (cond.type === "UnaryExpression" && cond.operator === "!") {
    const arg = cond.argument;
    // `!Number.isFinite(p)`, `!Number.isInteger(p)`, `!Number.isSafeInteger(p)`
    if (arg.type === "CallExpression" && arg.callee.type === "MemberExpression" && arg.arguments.length === 1) {
      const fn =
        arg.callee.object.type === "Identifier" &&
        arg.callee.object.name === "Number" &&
        arg.callee.property.type === "Identifier"
          ? arg.callee.property.name
          : "";
      const p = paramOf(arg.arguments[0] as Expr, params);
      if (p && !p.length && kind(params[p.index]!) === "number") {
        if (fn === "isFinite") return { param: p.index, value: "Infinity" };
        if (fn === "isInteger" || fn === "isSafeInteger") return { param: p.index, value: "1.5" };
      }
      return undefined;
    }
    const p = paramOf(arg, params);
    if (!p) return undefined;
    const k = kind(params[p.index]!);
    if (p.length)
      return k === "string"
        ? { param: p.index, value: '""' }
        : k === "array"
          ? { param: p.index, value: "[]" }
          : undefined;
    if (k === "string") return { param: p.index, value: '""' };
    if (k === "number") return { param: p.index, value: "0" };
    if (k === "boolean") return { param: p.index, value: "false" };
    return undefined;
  }
  if (cond.type === "CallExpression" && cond.callee.type === "MemberExpression" && cond.arguments.length === 1) {
    const c = cond.callee;
    if (
      c.object.type === "Identifier" &&
      c.object.name === "Number" &&
      c.property.type === "Identifier" &&
      c.property.name === "isNaN"
    ) {
      const p = paramOf(cond.arguments[0] as Expr, params);
      if (p && !p.length && kind(params[p.index]!) === "number") return { param: p.index, value: "NaN" };
    }
    return undefined;
  }
  if (cond.type === "BinaryExpression") {
    // `typeof p !== "string"` for an untyped parameter: a value of another type.
    const typeofSide = [cond.left, cond.right].find((s) => s.type === "UnaryExpression" && s.operator === "typeof");
    if (typeofSide && (cond.operator === "!==" || cond.operator === "!=")) {
      const other = (typeofSide === cond.left ? cond.right : cond.left) as Expr;
      const p = paramOf((typeofSide as TSESTree.UnaryExpression).argument, params);
      if (!p || p.length || other.type !== "Literal" || kind(params[p.index]!) !== "unknown") return undefined;
      const want = other.value;
      const value =
        want === "number"
          ? '"not a number"'
          : want === "string"
            ? "42"
            : want === "object" || want === "function" || want === "boolean"
              ? "42"
              : undefined;
      return value !== undefined ? { param: p.index, value } : undefined;
    }
    let left = cond.left as Expr;
    let right = cond.right;
    let op: string = cond.operator;
    if (numberOf(left) !== undefined || (left.type === "Literal" && typeof left.value === "string")) {
      [left, right] = [right, left];
      op = FLIP[op] ?? "";
    }
    const p = paramOf(left, params);
    if (!p) return undefined;
    const k = kind(params[p.index]!);
    const n = numberOf(right);
    if (n !== undefined) {
      const v = numberFor(op, n);
      if (v === undefined) return undefined;
      if (p.length) {
        if (v < 0 || v > 1000 || !Number.isInteger(v)) return undefined;
        if (k === "string") return { param: p.index, value: JSON.stringify("x".repeat(v)) };
        if (k === "array") return { param: p.index, value: `[${Array(v).fill("1").join(", ")}]` };
        return undefined;
      }
      return k === "number" ? { param: p.index, value: String(v) } : undefined;
    }
    if (
      (op === "===" || op === "==") &&
      right.type === "Literal" &&
      typeof right.value === "string" &&
      !p.length &&
      k === "string"
    )
      return { param: p.index, value: JSON.stringify(right.value) };
  }
  return undefined;
}

/** Guards among the leading `if (…) throw` statements of `fn`'s body, each with an input that trips it. */
export function guardCases(fn: Node, params: ParamInfo[], source: string): GuardCase[] {
  const body = (fn as { body?: Node | null }).body;
  if (!body || body.type !== "BlockStatement") return [];
  const out: GuardCase[] = [];
  const classes: string[] = [];
  for (const st of body.body) {
    if (st.type !== "IfStatement" || st.alternate) break;
    const thrown = throwOf(st.consequent);
    if (thrown === undefined) break;
    classes.push(thrown);
    const hit = satisfy(st.test, params);
    // An earlier guard may fire first for the same input: name the class only when every guard so far throws it.
    if (hit)
      out.push({
        ...hit,
        thrown: classes.every((c) => c === thrown) ? thrown : "",
        condition: source.slice(st.test.range[0], st.test.range[1]).replace(/\s+/g, " "),
      });
  }
  return out;
}
