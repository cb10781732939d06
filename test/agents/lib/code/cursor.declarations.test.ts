/** A cursor anywhere on a declaration finds its function (testgen, summarize scope "function"): a table over every declaration form. */
import { describe, expect, it } from "vitest";
import { functionAtOffset } from "../../../../agents/lib/code/cursor.js";
import { parseFile } from "../../../../agents/lib/code/parse.js";
import { lineStarts, positionAt } from "../../../../agents/lib/code/position.js";
import { targetAtCursor } from "../../../../agents/testgen/target.js";

const TS = { language: "typescript", jsx: false } as const;

const SOURCE = `import { Injectable } from "./di";

/** Joins two paths. */
export async function join(a: string, b: string): Promise<string> {
  return a + "/" + b;
}

/** Default export. */
export default function main(argv: string[]): number {
  return argv.length;
}

export const expr = function (x: number): number {
  return x * 2;
};

/** Arrow form. */
export const arrow = async (s: string): Promise<string[]> => {
  return s.split(",");
};

const local = (n: number) => n + 1;

@Injectable()
export class Service {
  /** Creates the service. */
  constructor(private readonly name: string) {}

  /** Greets. */
  @Injectable()
  greet(who: string): string {
    const inner = (w: string) => w.toUpperCase();
    return inner(who) + this.name;
  }

  get size(): number {
    return 1;
  }

  set size(v: number) {
    void v;
  }

  static async load(): Promise<Service> {
    return new Service("x");
  }
}

export const api = {
  /** Fetches. */
  fetch(url: string): string {
    return url;
  },
  post: (url: string) => url,
};

export const VALUE = 42;
`;

/** [what the cursor is on, the text it is at (the first occurrence, plus an offset into it), the expected function name]. */
const TABLE: [string, string, number, string][] = [
  ["function: doc comment", "Joins two paths", 3, "join"],
  ["function: blank between doc and declaration", "paths. */", 9, "join"],
  ["function: export keyword", "export async function join", 0, "join"],
  ["function: async keyword", "async function join", 2, "join"],
  ["function: function keyword", "function join", 3, "join"],
  ["function: name", "join(a", 2, "join"],
  ["function: parameter", "a: string, b", 0, "join"],
  ["function: parameter type", "b: string)", 4, "join"],
  ["function: return type", "Promise<string> {", 3, "join"],
  ["function: body", 'a + "/"', 0, "join"],
  ["function: closing brace", "+ b;\n}", 5, "join"],
  ["export default: default keyword", "default function main", 2, "main"],
  ["export default: doc comment", "Default export", 0, "main"],
  ["const = function: const keyword", "export const expr", 8, "expr"],
  ["const = function: name", "expr = function", 1, "expr"],
  ["const = function: function keyword", "= function (x", 4, "expr"],
  ["const = function: body", "x * 2", 0, "expr"],
  ["const = arrow: doc comment", "Arrow form", 2, "arrow"],
  ["const = arrow: export keyword", "export const arrow", 1, "arrow"],
  ["const = arrow: name", "arrow = async", 0, "arrow"],
  ["const = arrow: async keyword", "async (s: string)", 1, "arrow"],
  ["const = arrow: parameter", "s: string): Promise<string[]>", 0, "arrow"],
  ["const = arrow: arrow token", "=> {\n  return s.split", 0, "arrow"],
  ["const = arrow: body", 's.split(",")', 3, "arrow"],
  ["local arrow, expression body", "n + 1", 0, "local"],
  ["local arrow: name", "local = ", 0, "local"],
  ["constructor: doc comment", "Creates the service", 0, "constructor"],
  ["constructor: parameter property", "private readonly name", 8, "constructor"],
  ["method: doc comment", "Greets.", 0, "greet"],
  ["method: decorator", "@Injectable()\n  greet", 1, "greet"],
  ["method: name", "greet(who", 0, "greet"],
  ["method: parameter", "who: string): string", 1, "greet"],
  ["method: return type", "string {\n    const inner", 2, "greet"],
  ["method: body", "return inner(who)", 0, "greet"],
  ["nested arrow in a method: the innermost wins", "w.toUpperCase", 0, "inner"],
  ["nested arrow: its name", "inner = (w", 0, "inner"],
  ["getter: get keyword", "get size", 0, "size"],
  ["getter: body", "return 1;", 0, "size"],
  ["setter: name", "set size", 5, "size"],
  ["setter: parameter", "v: number) {", 0, "size"],
  ["static async method: static keyword", "static async load", 0, "load"],
  ["static async method: async keyword", "async load", 0, "load"],
  ["static async method: body", 'new Service("x")', 0, "load"],
  ["object-literal method: doc comment", "Fetches.", 0, "fetch"],
  ["object-literal method: name", "fetch(url", 0, "fetch"],
  ["object-literal method: body", "return url;", 0, "fetch"],
  ["object-literal arrow property: key", "post: (url", 0, "post"],
  ["object-literal arrow property: body", "=> url,", 3, "post"],
];

describe("a cursor anywhere on a declaration", () => {
  const file = parseFile(SOURCE, TS);
  const starts = lineStarts(SOURCE);
  for (const [what, needle, delta, name] of TABLE) {
    it(`${what} → ${name}`, () => {
      const at = SOURCE.indexOf(needle);
      expect(at, needle).toBeGreaterThanOrEqual(0);
      const fn = functionAtOffset(file.program, SOURCE, at + delta);
      expect(fn?.name).toBe(name);
      // testgen agrees, from the same cursor as a position.
      expect(targetAtCursor(file, positionAt(at + delta, starts)).slice.name).toBe(name);
    });
  }

  it("testgen knows what it found: exported, class and kind", () => {
    const on = (needle: string) => targetAtCursor(file, positionAt(SOURCE.indexOf(needle), starts));
    expect(on("export async function join").slice).toMatchObject({ name: "join", exported: true, kind: "function" });
    expect(on("export const arrow").slice).toMatchObject({ name: "arrow", exported: true, kind: "arrow" });
    expect(on("@Injectable()\n  greet")).toMatchObject({
      importable: true,
      slice: { name: "greet", className: "Service", kind: "method", decorators: ["@Injectable()"] },
    });
    expect(on("get size").slice).toMatchObject({ kind: "getter", className: "Service" });
    expect(on("local = ")).toMatchObject({ importable: true, slice: { exported: false } });
  });

  it("a cursor on no declaration names the nearest ones with their lines", () => {
    const on = (needle: string) => () => targetAtCursor(file, positionAt(SOURCE.indexOf(needle), starts));
    expect(on("export const VALUE")).toThrow(
      /^context\.cursor: no function or method at line 57, column 0; the nearest are Service\.load \(lines 44-46\), fetch \(lines 50-53\), post \(lines 54-54\)$/,
    );
    expect(on("import { Injectable }")).toThrow(
      /no function or method at line 1, column 0; the nearest are join \(lines 3-6\), main \(lines 8-11\), expr \(lines 13-15\)/,
    );
    const empty = parseFile("export const a = 1;\n", TS);
    expect(() => targetAtCursor(empty, { line: 1, column: 0 })).toThrow(/the file declares no named function/);
  });
});
