/**
 * Members of the built-in types the syntactic engine recognizes from a declaration alone (`x: T[]`,
 * `= []`, `: string`, `new Map()`): the common ones of lib.es2023, so that `agents.f` offers
 * `filter`, `find`, … while the checker is still loading the workspace.
 */
import type { Member } from "./members.js";

export type BuiltinType = "Array" | "string" | "Map" | "Set" | "Promise";

const METHODS: Record<BuiltinType, string[]> = {
  Array: [
    "at",
    "concat",
    "copyWithin",
    "entries",
    "every",
    "fill",
    "filter",
    "find",
    "findIndex",
    "findLast",
    "findLastIndex",
    "flat",
    "flatMap",
    "forEach",
    "includes",
    "indexOf",
    "join",
    "keys",
    "lastIndexOf",
    "map",
    "pop",
    "push",
    "reduce",
    "reduceRight",
    "reverse",
    "shift",
    "slice",
    "some",
    "sort",
    "splice",
    "toReversed",
    "toSorted",
    "toSpliced",
    "unshift",
    "values",
    "with",
  ],
  string: [
    "at",
    "charAt",
    "charCodeAt",
    "codePointAt",
    "concat",
    "endsWith",
    "includes",
    "indexOf",
    "lastIndexOf",
    "localeCompare",
    "match",
    "matchAll",
    "normalize",
    "padEnd",
    "padStart",
    "repeat",
    "replace",
    "replaceAll",
    "search",
    "slice",
    "split",
    "startsWith",
    "substring",
    "toLowerCase",
    "toUpperCase",
    "trim",
    "trimEnd",
    "trimStart",
  ],
  Map: ["clear", "delete", "entries", "forEach", "get", "has", "keys", "set", "values"],
  Set: ["add", "clear", "delete", "entries", "forEach", "has", "keys", "values"],
  Promise: ["catch", "finally", "then"],
};

const PROPERTIES: Record<BuiltinType, string[]> = {
  Array: ["length"],
  string: ["length"],
  Map: ["size"],
  Set: ["size"],
  Promise: [],
};

/** The built-in a type annotation names (`Foo[]`, `readonly Foo[]`, `Array<Foo>`, `string`, `Map<K, V>`, …). */
export function builtinOfType(text: string | undefined): BuiltinType | undefined {
  const t = text?.trim().replace(/^readonly\s+/, "");
  if (t === undefined || t === "") return undefined;
  if (/\[\]$/.test(t) || /^(?:Readonly)?Array\s*</.test(t)) return "Array";
  if (t === "string") return "string";
  const generic = /^([A-Za-z]+)\s*</.exec(t)?.[1];
  if (generic === "Map" || generic === "ReadonlyMap" || generic === "WeakMap") return "Map";
  if (generic === "Set" || generic === "ReadonlySet" || generic === "WeakSet") return "Set";
  if (generic === "Promise") return "Promise";
  return undefined;
}

/** The built-in a `new X(…)` constructs, for the constructors above. */
export function builtinOfConstructor(name: string): BuiltinType | undefined {
  return name === "Array" || name === "Map" || name === "Set" || name === "Promise"
    ? name
    : name === "WeakMap"
      ? "Map"
      : name === "WeakSet"
        ? "Set"
        : undefined;
}

/** The members of a built-in type. */
export function builtinMembers(type: BuiltinType): Member[] {
  return [
    ...PROPERTIES[type].map((name) => ({ name, kind: "property" as const, detail: `${type}.${name}`, line: 0 })),
    ...METHODS[type].map((name) => ({ name, kind: "method" as const, detail: `${type}.prototype.${name}`, line: 0 })),
  ];
}
