/**
 * Ranking a developer's words (docs/agents.md "search"): the defining symbol, its members included, found
 * from its description, identifier words, code synonyms and phrases, the query's leading verb, and above
 * internals and the prose that repeats it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INTERNAL_WEIGHT, headingNames, runQuery } from "../../../agents/search/query.js";
import { IndexRegistry } from "../../../agents/search/registry.js";
import type { WorkspaceIndex } from "../../../agents/search/workspace-index.js";
import { tempDir } from "../../helpers.js";

const example = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => `const response${i} = await client.get('https://example.com', {hooks: {}});`);

const FILES: Record<string, string> = {
  "src/options.ts": [
    "export interface ClientOptions {",
    "\t/**",
    "\tUser-defined JSON-parsing function.",
    "",
    "\tUse it to parse JSON with a reviver, or to log parse errors with the request.",
    "",
    "\t@example",
    "\t```",
    ...example(12),
    "\t```",
    "\t*/",
    "\t// `options` stays out of the context on purpose.",
    "\tparseJson?: (text: string) => unknown;",
    "",
    "\t/**",
    "\tUser-defined JSON-stringifying function: turns the `json` option into the body, and parses nothing.",
    "\t*/",
    "\tstringifyJson?: (data: unknown) => string;",
    "",
    "\t/**",
    "\tThis hook enables you to modify the request right before it is sent, for example to add a retry header.",
    "\t*/",
    "\tbeforeRequest?: Hook[];",
    "",
    "\t/**",
    "\tThis hook enables you to modify the request right before retry.",
    "\t*/",
    "\tbeforeRetry?: Hook[];",
    "}",
    "",
  ].join("\n"),
  "src/errors.ts": [
    "/** The error thrown when a request times out, with the request that timed out. */",
    "export class TimeoutError extends Error {",
    "  constructor(readonly request: Request) {",
    "    super('Request timed out');",
    "  }",
    "}",
    "",
  ].join("\n"),
  "src/guards.ts": [
    'import { TimeoutError } from "./errors.js";',
    "",
    "/**",
    "Type guard to check if an error is a `TimeoutError`.",
    "",
    "@example",
    "```",
    ...example(45),
    "```",
    "*/",
    "export function isTimeoutError(error: unknown): error is TimeoutError {",
    "  return error instanceof TimeoutError;",
    "}",
    "",
  ].join("\n"),
  "src/retry.ts": [
    "/**",
    "Force a retry from a response hook.",
    "",
    "@example",
    "```",
    ...example(50),
    "```",
    "*/",
    "export const retry = (options?: RetryOptions) => new RetryMarker(options);",
    "",
    "/** Marker returned by `retry()` to signal a forced retry from response hooks. */",
    "export class RetryMarker {",
    "  constructor(readonly options?: RetryOptions) {}",
    "}",
    "",
  ].join("\n"),
  "src/callers.ts": [
    "export function serialCaller(tasks: Task[]): Promise<void> {",
    "  return tasks.reduce((p, t) => p.then(() => t()), Promise.resolve());",
    "}",
    "",
    "export function parallelCaller(tasks: Task[]): Promise<unknown> {",
    "  return Promise.all(tasks.map((t) => t()));",
    "}",
    "",
    "export function callTasks(tasks: Task[]): void {",
    "  for (const t of tasks) t();",
    "}",
    "",
    "export function removeAllTasks(tasks: Task[]): void {",
    "  tasks.length = 0; // run all of them first",
    "}",
    "",
  ].join("\n"),
  "src/case.ts": [
    "/** Words whose first letter has the same case. */",
    "export type FirstLetterCase<S extends string> = S extends `${infer F}${string}` ? F : never;",
    "",
    "export function upperFirst(str: string): string {",
    "  return str ? str[0]!.toUpperCase() + str.slice(1) : '';",
    "}",
    "",
  ].join("\n"),
  "src/merge.ts": [
    "// Walks every source: headers are merged as headers, hooks are concatenated, options are copied.",
    "const deepMergeInternal = (isRoot: boolean, ...sources: object[]) => {",
    "  const headers = {};",
    "  const hooks = {};",
    "  for (const source of sources) Object.assign(headers, source);",
    "  return { headers, hooks, isRoot };",
    "};",
    "",
    "export const deepMerge = (...sources: object[]) => deepMergeInternal(true, ...sources);",
    "",
    "export const mergeHeaders = (a: Headers, b: Headers) => new Headers([...a, ...b]);",
    "",
  ].join("\n"),
  "src/one/votes.ts": "export const ONE = 1;\n\n/** Counts each vote. */\nexport function tallyVotes(v: string[]) {}\n",
  "src/two/votes.ts": "export const TWO = 1;\n\n/** Counts each vote. */\nfunction tallyVotes(v: string[]) {}\n",
  "README.md": [
    "# client",
    "",
    "## `mergeHeaders(a, b)`",
    "",
    "Merge two header objects into one; merge headers for every request.",
    "",
    "## Custom merge",
    "",
    "Merge two header objects your own way.",
    "",
  ].join("\n"),
};

describe("search ranks the defining symbol", () => {
  let ws: { dir: string; cleanup: () => void };
  let index: WorkspaceIndex;
  beforeAll(async () => {
    ws = tempDir("aips-");
    for (const d of ["src", "src/one", "src/two"]) mkdirSync(join(ws.dir, d));
    for (const [rel, text] of Object.entries(FILES)) writeFileSync(join(ws.dir, rel), text);
    index = (await new IndexRegistry().get(ws.dir, 0)).index;
  });
  afterAll(() => ws.cleanup());

  const ranked = (q: string): string[] => runQuery(index, q, { limit: 5 }).map((h) => `${h.path}#${h.symbol ?? ""}`);

  it("a member found by its own JSDoc's first sentence, past a long example and a `//` line", () => {
    expect(ranked("User-defined JSON-parsing function.")[0]).toBe("src/options.ts#parseJson");
    // The description is the first sentence: the sibling whose longer doc shares most words ranks below.
    expect(ranked("This hook enables you to modify the request right before retry.").slice(0, 2)).toEqual([
      "src/options.ts#beforeRetry",
      "src/options.ts#beforeRequest",
    ]);
  });

  it("a doc comment longer than 40 lines still describes its definition", () => {
    expect(ranked("Force a retry from a response hook.")[0]).toBe("src/retry.ts#retry");
  });

  it("a type guard outranks the class it guards: `isTimeoutError` meets `TimeoutError`", () => {
    expect(ranked("Type guard to check if an error is a `TimeoutError`.")[0]).toBe("src/guards.ts#isTimeoutError");
    expect(ranked("is this error a timeout error")[0]).toBe("src/guards.ts#isTimeoutError");
    // Asked as a noun, the class.
    expect(ranked("error thrown when the request times out")[0]).toBe("src/errors.ts#TimeoutError");
  });

  it("phrases of the synonym table: at the same time → parallel, one after another → serial", () => {
    expect(ranked("run all tasks at the same time")[0]).toBe("src/callers.ts#parallelCaller");
    expect(ranked("call tasks one after another")[0]).toBe("src/callers.ts#serialCaller");
  });

  it("the leading verb meets a function's first word; types name things", () => {
    // capitalize → upper (a synonym), letter → char; the type has "first" and "letter" in its name.
    expect(ranked("capitalize the first letter")[0]).toBe("src/case.ts#upperFirst");
    expect(ranked("uppercase the first character")[0]).toBe("src/case.ts#upperFirst");
  });

  it("an exported definition above the same definition kept internal, by INTERNAL_WEIGHT", () => {
    const hits = runQuery(index, "tally the votes", { limit: 5 });
    expect(hits.map((h) => `${h.path}#${h.symbol ?? ""}`).slice(0, 2)).toEqual([
      "src/one/votes.ts#tallyVotes",
      "src/two/votes.ts#tallyVotes",
    ]);
    expect(hits[1]!.score / hits[0]!.score).toBeCloseTo(INTERNAL_WEIGHT, 1);
  });

  it("a README heading naming a symbol collapses into the definition; other headings stay", () => {
    const hits = ranked("merge two header objects");
    expect(hits[0]).toBe("src/merge.ts#mergeHeaders");
    expect(hits).not.toContain("README.md#`mergeHeaders(a, b)`");
    expect(hits).toContain("README.md#Custom merge");
  });
});

describe("headingNames", () => {
  it("names the identifiers a heading marks as code", () => {
    expect(headingNames("`mergeHeaders(a, b)`")).toEqual(["mergeHeaders", "a", "b"]);
    expect(headingNames("ky.extend(defaultOptions)")).toEqual(["extend"]);
    expect(headingNames("stripExtension")).toEqual(["stripExtension"]);
    expect(headingNames("Custom Merger")).toEqual([]);
    expect(headingNames("")).toEqual([]);
    expect(headingNames(`${"a".repeat(100_000)}(`)).toEqual(["a".repeat(100_000)]);
  });
});
