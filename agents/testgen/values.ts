/** Sample arguments and edge cases derived from parameter types (text of the type annotation). */
import type { ParamInfo } from "../lib/code/signature.js";

/** Split a union type at the top level (`"a" | "b"`, not inside `<…>`, `(…)`, `{…}`). */
function topLevelUnion(type: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of type) {
    if ("<({[".includes(ch)) depth++;
    else if (">)}]".includes(ch)) depth--;
    if (ch === "|" && depth === 0) {
      parts.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  parts.push(cur.trim());
  return parts.filter((p) => p.length > 0);
}

/** A value of the given type as source text; `ts` allows `as` casts for types we cannot build. */
export function sampleFor(type: string | undefined, ts: boolean, name = "value"): string {
  if (type === undefined) return "undefined";
  const t = type.trim();
  const union = topLevelUnion(t).filter((p) => p !== "undefined" && p !== "null");
  if (union.length > 1) return sampleFor(union[0], ts, name);
  if (union.length === 1 && union[0] !== t) return sampleFor(union[0], ts, name);
  if (t === "string") return JSON.stringify(name);
  if (t === "number") return "1";
  if (t === "bigint") return "1n";
  if (t === "boolean") return "true";
  if (t === "unknown" || t === "any") return "{}";
  if (t === "undefined" || t === "void") return "undefined";
  if (t === "null") return "null";
  if (/^(".*"|'.*'|-?\d+(\.\d+)?|true|false)$/.test(t)) return t.startsWith("'") ? JSON.stringify(t.slice(1, -1)) : t;
  if (t.endsWith("[]")) return `[${sampleFor(t.slice(0, -2).replace(/^\((.*)\)$/, "$1"), ts, name)}]`;
  const generic = /^(readonly\s+)?(Array|ReadonlyArray|Set|Map|Promise|Record|Partial|Readonly)<(.*)>$/.exec(t);
  if (generic) {
    const inner = generic[3]!;
    switch (generic[2]) {
      case "Array":
      case "ReadonlyArray":
        return `[${sampleFor(inner, ts, name)}]`;
      case "Set":
        return `new Set([${sampleFor(inner, ts, name)}])`;
      case "Map":
        return "new Map()";
      case "Promise":
        return `Promise.resolve(${sampleFor(inner, ts, name)})`;
      default:
        return ts ? `{} as ${t}` : "{}";
    }
  }
  if (t.startsWith("readonly ")) return sampleFor(t.slice(9), ts, name);
  if (t === "Date") return 'new Date("2024-01-01T00:00:00Z")';
  if (t === "RegExp") return "/x/";
  if (t === "AbortSignal") return "new AbortController().signal";
  if (t === "Buffer") return 'Buffer.from("x")';
  if (/^\(.*\)\s*=>/.test(t) || t === "Function") return "() => undefined";
  if (t.startsWith("{")) return ts ? `{} as ${t}` : "{}";
  return ts ? `{} as unknown as ${t}` : "{}";
}

/** The argument list for a happy-path call. */
export function sampleArgs(params: ParamInfo[], ts: boolean): string[] {
  const args: string[] = [];
  for (const p of params) {
    if (p.rest) break;
    if (p.optional) break; // the happy path leaves optional parameters to their defaults
    args.push(p.type === undefined ? "undefined" : sampleFor(p.type, ts, p.name));
  }
  return args;
}

/** `it.todo` titles for edge cases the types suggest. */
export function edgeCases(params: ParamInfo[]): string[] {
  const out: string[] = [];
  for (const p of params) {
    const t = p.type?.replace(/\s+/g, " ") ?? "";
    const parts = topLevelUnion(t);
    if (parts.includes("string")) out.push(`${p.name}: empty string`);
    if (parts.includes("number")) out.push(`${p.name}: 0`, `${p.name}: a negative number`);
    if (parts.some((x) => x.endsWith("[]") || /^(readonly\s+)?(Readonly)?Array</.test(x)))
      out.push(`${p.name}: an empty array`);
    if (p.optional && !p.rest) out.push(`${p.name}: undefined (optional)`);
  }
  return out;
}
