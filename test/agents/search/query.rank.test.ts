/** search ranking (docs/agents.md "search"): symbols above prose that repeats them; synonyms and identifier words reach the symbol. */
import { describe, expect, it } from "vitest";
import { runQuery } from "../../../agents/search/query.js";
import { indexedWorkspace } from "./indexed-workspace.js";

describe("search ranking", () => {
  const index = indexedWorkspace({
    "README.md":
      "# paths\n\n## stripExtension\n\nRemoves the extension from a file name.\n\n```ts\nstripExtension('a.ts')\n```\n",
    "src/paths.ts":
      "/** Removes the extension from a file name. */\nexport function stripExtension(name: string): string {\n  const dot = name.lastIndexOf('.');\n  return dot > 0 ? name.slice(0, dot) : name;\n}\n\n/** Lists a folder. */\nexport function readDir(path: string): string[] {\n  return [path];\n}\n",
    "src/other.ts":
      "/** Parses a number. */\nexport function parse_int_v2(s: string): number {\n  return Number(s);\n}\n",
    "src/hooks.ts": [
      "export function serialCaller(hooks: Function[]) {",
      "  return hooks.reduce((p, h) => p.then(() => h()), Promise.resolve());",
      "}",
      "",
      "/** Copies an object one level deep. */",
      "export function cloneShallow<T>(value: T): T {",
      "  return { ...value };",
      "}",
      "",
      "export function mergeHeaders(a: Headers, b: Headers): Headers {",
      "  return new Headers([...a, ...b]);",
      "}",
      "",
      "export function removeTempDir(dir: string): void {",
      "  void dir;",
      "}",
      "",
      "/** Fetch options. */",
      "export interface RequestOptions {",
      "  /** Milliseconds to wait for the server before giving up. */",
      "  timeout?: number;",
      "  /** Follow redirects of the response. */",
      "  redirect?: boolean;",
      "}",
      "",
      "/** Logs the request. */",
      "export function logRequest(url: string): void {",
      "  // Gives up after the server timeout; wait for it to answer. Milliseconds.",
      "  console.log(url);",
      "}",
      "",
    ].join("\n"),
    // The same two words in the other order: only the verb first tells "how do I log a request" apart.
    "src/a-log.ts": "export function requestLog(): string[] {\n  return [];\n}\n",
    // Neither name nor body says "backoff"; the one call site does (the variable its result goes into).
    "src/retry.ts": [
      "function nextWait(attempt: number): number {",
      "  return 2 ** attempt * 100;",
      "}",
      "",
      "function pause(ms: number): number {",
      "  return ms;",
      "}",
      "",
      "export function retryLater(attempt: number): number {",
      "  const backoffMs = nextWait(attempt);",
      "  return pause(backoffMs);",
      "}",
      "",
    ].join("\n"),
    // "get" in "what error do I get" asks for something; it names no getter.
    "src/errors.ts": [
      "/** Thrown when a request is not answered in time. */",
      "export class TimeoutError extends Error {}",
      "",
      "/** The error the server sent with a response, if any. */",
      "export function getError(response: { error?: Error }): Error | undefined {",
      "  return response.error;",
      "}",
      "",
    ].join("\n"),
    // A test repeats the symbol's words around every call: it must not outrank the definition.
    "test/hooks.test.ts": `import { mergeHeaders } from "../src/hooks";\n${Array.from({ length: 8 }, (_, i) => `test("merge headers ${i}", () => mergeHeaders(new Headers(), new Headers()));`).join("\n")}\n`,
  });

  const top = (q: string): string | null => {
    const h = runQuery(index(), q, { limit: 5 })[0];
    return h ? `${h.path}#${h.symbol ?? ""}` : null;
  };

  it("a README heading copied from the JSDoc does not beat the function", () => {
    expect(top("Removes the extension from a file name.")).toBe("src/paths.ts#stripExtension");
    expect(top("stripExtension")).toBe("src/paths.ts#stripExtension");
  });

  it("synonyms reach the symbol: strip/remove, ext/extension, directory/dir/folder", () => {
    expect(top("strip ext")).toBe("src/paths.ts#stripExtension");
    expect(top("list the directory")).toBe("src/paths.ts#readDir");
  });

  const ranked = (q: string): string[] => runQuery(index(), q, { limit: 5 }).map((h) => `${h.path}#${h.symbol ?? ""}`);

  it("word forms meet: calls/caller, merging/merge, headers/header", () => {
    expect(top("calls hooks in serial")).toBe("src/hooks.ts#serialCaller");
    expect(top("merging header")).toBe("src/hooks.ts#mergeHeaders");
  });

  it("synonyms and abbreviations reach the symbol: copy/clone, delete/remove, folder/dir, temporary/temp", () => {
    expect(top("copy an object")).toBe("src/hooks.ts#cloneShallow");
    expect(top("delete the temporary folder")).toBe("src/hooks.ts#removeTempDir");
    // Both query words reach stripExtension (remove through its synonym strip); removeTempDir only starts
    // with the query's first word. The README heading naming stripExtension collapses into the definition.
    expect(ranked("remove the extension").slice(0, 2)).toEqual([
      "src/paths.ts#stripExtension",
      "src/hooks.ts#removeTempDir",
    ]);
    expect(ranked("remove the extension")).not.toContain("README.md#stripExtension");
  });

  it("a documented member is its own hit, found by its doc comment before a body that only mentions the words", () => {
    const hits = runQuery(index(), "wait for the server before giving up", { limit: 5 });
    expect(hits[0]).toMatchObject({ path: "src/hooks.ts", symbol: "timeout", kind: "property", line_start: 20 });
    expect(hits.map((h) => h.symbol)).toContain("logRequest");
  });

  it("the definition ranks above a test file that calls it over and over", () => {
    expect(ranked("merge headers")[0]).toBe("src/hooks.ts#mergeHeaders");
    expect(ranked("merge headers")).toContain("test/hooks.test.ts#");
  });

  it("a developer's question: the frame is skipped and its verb leads ('how do I …')", () => {
    // requestLog and logRequest hold the same words; the verb after "how do I" picks the one named for it.
    expect(top("request log")).toBe("src/a-log.ts#requestLog");
    expect(top("how do I log a request")).toBe("src/hooks.ts#logRequest");
    expect(top("is there a way to log a request")).toBe("src/hooks.ts#logRequest");
  });

  it("a light verb inside a question ('what error do I get …') is no query word; leading, it is the action", () => {
    expect(top("what error do I get when the server takes too long")).toBe("src/errors.ts#TimeoutError");
    expect(top("which error should I use when the server takes too long")).toBe("src/errors.ts#TimeoutError");
    expect(top("how do I get the error of a response")).toBe("src/errors.ts#getError");
  });

  it("a definition is found by the words of its call sites in the same file", () => {
    // nextWait's result is assigned to backoffMs: "backoff" reaches nextWait, which never says it, as well as its caller.
    expect(ranked("backoff")).toEqual(expect.arrayContaining(["src/retry.ts#retryLater", "src/retry.ts#nextWait"]));
    expect(ranked("backoff")).not.toContain("src/retry.ts#pause");
  });

  it("identifier words split from snake_case and digits are searchable", () => {
    expect(top("parse int")).toBe("src/other.ts#parse_int_v2");
    expect(top("parse_int_v2")).toBe("src/other.ts#parse_int_v2");
  });
});

describe("search ranking: query strings and search parameters, totals and overall figures", () => {
  const index = indexedWorkspace({
    "src/url.ts": [
      "export const hasSearchParameters = (search: SearchParamsOption): boolean => {",
      "  return search !== undefined;",
      "};",
      "",
      "export function hasFormParameters(form: FormData): boolean {",
      "  return form !== undefined;",
      "}",
      "",
      "/** Milliseconds until the whole chain gives up. */",
      "export function totalTimeout(start: number): number {",
      "  return start;",
      "}",
      "",
      "/** The timeout of one attempt. */",
      "export function attemptTimeout(): number {",
      "  return 1;",
      "}",
    ].join("\n"),
  });
  const ranked = (q: string): string[] => runQuery(index(), q, { limit: 5 }).map((h) => h.symbol ?? "");

  it("a URL's query string is its search parameters (URLSearchParams): the query word meets search", () => {
    expect(ranked("does the request have query string parameters")[0]).toBe("hasSearchParameters");
  });

  it("an overall figure is a total", () => {
    expect(ranked("overall timeout")[0]).toBe("totalTimeout");
  });
});
