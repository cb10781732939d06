/** Chunking for search (docs/agents.md "search"): each definition with its own doc comment as its description. */
import { describe, expect, it } from "vitest";
import { chunkFile, descriptionOf } from "../../../agents/search/chunk.js";
import { callSiteWords } from "../../../agents/search/workspace-index.js";

const summary = (src: string) =>
  chunkFile(src, false, "m").map((c) => [c.kind, c.symbol, c.line_start, c.line_end, c.exported]);

describe("chunkFile: descriptions", () => {
  it("a doc comment of any length belongs to its definition; the code in its example defines nothing", () => {
    const example = Array.from({ length: 60 }, (_, i) => `const step${i} = await api.get('/x');`);
    const src = [
      "/**",
      "Force a retry from a response hook.",
      "",
      "This allows you to retry based on the response content.",
      "",
      "@example",
      "```",
      ...example,
      "```",
      "*/",
      "export const retry = (options?: RetryOptions) => new RetryMarker(options);",
      "",
    ].join("\n");
    const chunks = chunkFile(src, false, "constants");
    // One definition (its first 60-line window; the rest of a long definition is text).
    expect(chunks.map((c) => [c.kind, c.symbol, c.line_start])).toEqual([
      ["const", "retry", 1],
      ["text", undefined, 61],
    ]);
    // The head: the first sentence only (the summary), then the declaration.
    expect(chunks[0]!.head).toBe(
      "Force a retry from a response hook.\nexport const retry = (options?: RetryOptions) => new RetryMarker(options);",
    );
  });

  it("`//` lines above a definition are its description, and so are `//` lines under a doc comment", () => {
    const src = [
      "import { x } from './x';",
      "",
      "// Create a wrapper with an optional merger.",
      "// Several arguments are merged left to right.",
      "export function createMerge(merger?: Merger) {",
      "  return merger;",
      "}",
      "",
      "export interface Options {",
      "  /**",
      "  User-defined JSON-parsing function.",
      "",
      "  @default JSON.parse()",
      "  */",
      "  // `options` is left out of the context on purpose.",
      "  parseJson?: (text: string) => unknown;",
      "}",
      "",
    ].join("\n");
    const chunks = chunkFile(src, false, "merge");
    expect(chunks.map((c) => [c.kind, c.symbol, c.line_start])).toEqual([
      ["text", undefined, 1],
      ["function", "createMerge", 3],
      ["type", "Options", 9],
      ["property", "parseJson", 10],
    ]);
    expect(chunks[1]!.head).toBe(
      "Create a wrapper with an optional merger.\nexport function createMerge(merger?: Merger) {",
    );
    expect(chunks[3]!.head).toBe("User-defined JSON-parsing function.\n  parseJson?: (text: string) => unknown;");
  });

  it("documented members of object literals and class fields with initializers are their own chunks", () => {
    const src = [
      "export const defaults = {",
      "  /** Milliseconds between two attempts. */",
      "  delay: 300,",
      "  /** Retry the request. */",
      "  async retry(request) {",
      "    return request;",
      "  },",
      "};",
      "",
      "export class Pool {",
      "  /** Workers started so far. */",
      "  private started = 0;",
      "  /** Whether a === b holds. */",
      "  same === other;",
      "}",
      "",
    ].join("\n");
    expect(chunkFile(src, false).map((c) => [c.kind, c.symbol])).toEqual([
      ["const", "defaults"],
      ["property", "delay"],
      ["method", "retry"],
      ["class", "Pool"],
      ["property", "started"],
    ]);
  });

  it("decorators and the doc comment above them join the definition", () => {
    const src = ["export class K {", "  /** Runs the job. */", "  @traced()", "  run(n: number): void {", "  }", "}"];
    const chunks = chunkFile(src.join("\n"), false);
    expect(chunks.map((c) => [c.kind, c.symbol, c.line_start])).toEqual([
      ["class", "K", 1],
      ["method", "run", 2],
    ]);
    expect(chunks[1]!.head).toBe("Runs the job.\n  run(n: number): void {");
  });

  it("descriptionOf: comment markers stripped, the first sentence, no block tags or fenced code", () => {
    const lines = ["/**", " * ```", " * code()", " * ```", " * Parses a number. Then more.", " * @param s - x", " */"];
    expect(descriptionOf(lines, 0, lines.length)).toBe("Parses a number.");
    expect(descriptionOf(["/** One line. Another */"], 0, 1)).toBe("One line.");
    expect(descriptionOf(["/** No full stop */"], 0, 1)).toBe("No full stop");
    expect(descriptionOf(["// a", "// b."], 0, 2)).toBe("a b.");
  });
});

describe("chunkFile: exports", () => {
  it("a top-level definition is marked exported or not in a file that exports; not marked in a file that does not", () => {
    const src = [
      "const internal = 1;",
      "",
      "export const api = 2;",
      "",
      "function listed() {}",
      "",
      "function hidden() {}",
      "",
      "class Later {}",
      "",
      "export {",
      "  listed as shown,",
      "};",
      "export default Later;",
      "",
    ].join("\n");
    expect(summary(src).filter((c) => c[1] !== undefined)).toEqual([
      ["const", "internal", 1, 2, false],
      ["const", "api", 3, 4, true],
      ["function", "listed", 5, 6, true],
      ["function", "hidden", 7, 8, false],
      ["class", "Later", 9, 14, true],
    ]);
    expect(summary("function a() {}\n\nfunction b() {}\n").map((c) => c[4])).toEqual([undefined, undefined]);
  });
});

describe("chunkFile: methods and overloads", () => {
  it("a method whose signature wraps, or whose return type is a function type, is its own definition; calls and callbacks are not", () => {
    const src = [
      "export class Hooks {",
      "  /** Register a handler. */",
      "  hook<NameT extends string>(",
      "    name: NameT,",
      "    options?: HookOptions,",
      "  ): () => void {",
      "    register(",
      "      name,",
      "    );",
      "    return () => {};",
      "  }",
      "",
      "  /** Spy on every call before it runs. */",
      "  beforeEach(fn: (event: string) => void): () => void {",
      "    items.forEach((x): void => {",
      '    describe("x", () => {',
      "    });",
      "    return () => {};",
      "  }",
      "}",
    ].join("\n");
    expect(summary(src)).toEqual([
      ["class", "Hooks", 1, 1, true],
      ["method", "hook", 2, 12, undefined],
      ["method", "beforeEach", 13, 20, undefined],
    ]);
    expect(chunkFile(src, false)[1]!.head).toBe(
      "Register a handler.\n  hook<NameT extends string>(\n    name: NameT,\n    options?: HookOptions,\n  ): () => void {",
    );
  });

  it("a method whose type parameters wrap (one a line, then `>(`) is its own definition; a wrapped type argument is not", () => {
    const src = [
      "export class Hookable {",
      "  callHookParallel(name: string, ...args: unknown[]): Promise<void> {",
      "    return run(name, args);",
      "  }",
      "",
      "  callHookWith<",
      "    NameT extends string,",
      "    CallFunction extends (",
      "      hooks: HookCallback[],",
      "    ) => any,",
      "  >(",
      "    caller: CallFunction,",
      "    name: NameT,",
      "  ): ReturnType<CallFunction> {",
      "    const seen = new Map<",
      "      string,",
      "      number",
      "    >();",
      "    return caller(this.hooks[name], name);",
      "  }",
      "}",
    ].join("\n");
    expect(summary(src)).toEqual([
      ["class", "Hookable", 1, 1, true],
      ["method", "callHookParallel", 2, 5, undefined],
      ["method", "callHookWith", 6, 21, undefined],
    ]);
  });

  it("a method's type parameters may hold an arrow type, its parameters an object type with `;`; a generator method is one; a call with a string holding `{` and `;` is no method", () => {
    const src = [
      "export class Ky {",
      "  async #retry<T extends (...args: any) => Promise<any>>(fn: T): Promise<ReturnType<T> | void> {",
      "    return fn();",
      "  }",
      "",
      "  private step(work: Generator<{ text: string; lines: number }>): void {",
      '    expect(chunks[1]!.head).toBe("Runs the job. run(n: number): void {");',
      "    work.next();",
      "  }",
      "",
      "  get admission(): Readonly<{ admitted: boolean; reason: string | null }> {",
      "    return this.#admission;",
      "  }",
      "",
      "  invoke<T = Record<string, unknown>>(",
      "    body: { action: string; context: Record<string, unknown> },",
      "  ): Promise<T> {",
      "    return send(body);",
      "  }",
      "",
      "  *projectTexts(): Generator<[string, string]> {",
      "    yield* this.texts;",
      "  }",
      "}",
    ].join("\n");
    expect(summary(src)).toEqual([
      ["class", "Ky", 1, 1, true],
      ["method", "#retry", 2, 5, undefined],
      ["method", "step", 6, 10, undefined],
      ["method", "admission", 11, 14, undefined],
      ["method", "invoke", 15, 20, undefined],
      ["method", "projectTexts", 21, 24, undefined],
    ]);
  });

  it("overload signatures and the implementation are one definition: the first one's doc comment, every declaration in the head", () => {
    const src = [
      "/** Convert to train case. */",
      'export function trainCase(): "";',
      "export function trainCase<T extends string>(str: T): string;",
      "export function trainCase<T extends string>(str?: T, opts?: Options) {",
      '  return words(str).join("-");',
      "}",
      "export function other() {}",
    ].join("\n");
    expect(summary(src)).toEqual([
      ["function", "trainCase", 1, 6, true],
      ["function", "other", 7, 7, true],
    ]);
    expect(chunkFile(src, false)[0]!.head).toBe(
      [
        "Convert to train case.",
        'export function trainCase(): "";',
        "export function trainCase<T extends string>(str: T): string;",
        "export function trainCase<T extends string>(str?: T, opts?: Options) {",
      ].join("\n"),
    );
  });
});

describe("chunkFile: hostile input stays linear", () => {
  it("200,000 `//` lines, a 200,000-line doc comment, and definitions under each", () => {
    // Each definition finds its comment in constant time (computed once per file); correctness asserted here,
    // cost in the benchmark.
    const slashes = Array.from({ length: 200_000 }, () => "// x").join("\n");
    const a = chunkFile(`${slashes}\nexport function f() {}\n`, false);
    expect(a.filter((c) => c.symbol !== undefined).map((c) => [c.symbol, c.line_start])).toEqual([["f", 1]]);
    const doc = `/**\n${Array.from({ length: 200_000 }, () => "  value: 1,").join("\n")}\n*/\n  member: number;\n`;
    const b = chunkFile(`interface I {\n${doc}}\n`, false);
    expect(b.filter((c) => c.symbol !== undefined).map((c) => [c.kind, c.symbol, c.line_start])).toEqual([
      ["type", "I", 1],
      ["property", "member", 2],
    ]);
    const clause = `export {\n${Array.from({ length: 100_000 }, (_, i) => `  n${i},`).join("\n")}\n};\nfunction n7() {}\n`;
    expect(chunkFile(clause, false).find((c) => c.symbol === "n7")?.exported).toBe(true);
    expect(chunkFile(`export default x${" ".repeat(200_000)}!\n`, false).length).toBe(1);
    // 20,000 definitions: each finds the next one without copying the rest of the list.
    const many = Array.from({ length: 20_000 }, (_, i) => `function f${i}() {}`).join("\n");
    const defs = chunkFile(many, false);
    expect(defs.length).toBe(20_000);
    expect(defs[19_999]).toMatchObject({ symbol: "f19999", line_start: 20_000, line_end: 20_000 });
  });
});

describe("callSiteWords", () => {
  it("gives a definition the name of each definition calling it and the variable its result is assigned to", () => {
    const chunks = chunkFile(
      [
        "function nextWait(n: number): number {",
        "  return n;",
        "}",
        "",
        "class Client {",
        "  #delay(): number {",
        "    return 1;",
        "  }",
        "",
        "  retry(): number {",
        "    const backoffMs = nextWait(this.#delay());",
        "    this.lastWait = nextWait (2);",
        "    return backoffMs;",
        "  }",
        "}",
        "",
      ].join("\n"),
      false,
    );
    const uses = callSiteWords(chunks);
    expect(uses.get("nextWait")).toEqual(["retry", "backoffMs", "retry", "this.lastWait"]);
    expect(uses.get("#delay")).toEqual(["retry", "backoffMs"]);
    // A definition never called in its file, or calling itself, has no call-site words.
    expect(uses.get("retry")).toBeUndefined();
    // A minified line is not scanned.
    expect(
      callSiteWords(chunkFile(`function f() {}\nconst x = ${"f(".repeat(600)}\n`, false)).get("f"),
    ).toBeUndefined();
  });
});
