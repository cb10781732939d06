import { describe, expect, it } from "vitest";
import { chunkFile } from "../../../agents/search/chunk.js";
import {
  processTerm,
  queryGroups,
  questionFrame,
  splitIdentifier,
  stem,
  tokenize,
} from "../../../agents/search/tokenize.js";

describe("tokenize", () => {
  it("splits camelCase, PascalCase acronyms, snake_case and digits, keeping the whole identifier", () => {
    expect(splitIdentifier("adaptivePoolGrow2")).toEqual(["adaptive", "Pool", "Grow", "2"]);
    expect(splitIdentifier("HTTPServer")).toEqual(["HTTP", "Server"]);
    expect(splitIdentifier("max_concurrent_v8")).toEqual(["max", "concurrent", "v", "8"]);
    expect(tokenize("const p95Ms = pool_size;")).toEqual([
      "const",
      "p95Ms",
      "p",
      "95",
      "Ms",
      "95Ms",
      "pool_size",
      "pool",
      "size",
    ]);
  });

  it("splits the hard cases one pass at a time: acronyms at either end, digits inside, separators in a row", () => {
    // As before the rewrite: the last capital of a run starts the next word when a lower-case letter follows.
    expect(splitIdentifier("parseJSONToXMLv2")).toEqual(["parse", "JSON", "To", "XM", "Lv", "2"]);
    expect(splitIdentifier("getURL")).toEqual(["get", "URL"]);
    expect(splitIdentifier("URLParser")).toEqual(["URL", "Parser"]);
    expect(splitIdentifier("utf8Encode")).toEqual(["utf", "8", "Encode"]);
    expect(splitIdentifier("__private$$name__")).toEqual(["private", "name"]);
    expect(splitIdentifier("ABC")).toEqual(["ABC"]);
    expect(splitIdentifier("x")).toEqual(["x"]);
    expect(splitIdentifier("")).toEqual([]);
    expect(tokenize("déjà vu 42x")).toEqual(["d", "j", "vu", "42", "x"]);
  });

  it("is linear on hostile input: long capital runs and long identifiers (the old acronym regex backtracked)", () => {
    // Correctness on a 200,000-character acronym run; the cost is measured by the benchmark, not asserted here.
    const caps = "A".repeat(200_000);
    expect(splitIdentifier(`${caps}b`)).toEqual(["A".repeat(199_999), "Ab"]);
    expect(splitIdentifier(`${caps}1`)).toEqual([caps, "1"]);
    const toks = tokenize(`${"aB".repeat(50_000)} ${"_".repeat(100_000)}`);
    expect(toks[0]!.length).toBe(100_000);
    // The identifier, its words (a, then "Ba" 49,999 times, then B), the identifier without its first word,
    // and the run of underscores.
    expect(toks.length).toBe(1 + 50_001 + 1 + 1);
    expect(toks[50_002]!.length).toBe(99_999);
  });

  it("widens each query word with its documented code synonyms, at half weight, in one group per word", () => {
    const groups = (q: string): string[][] => queryGroups(q).map((g) => g.terms.map((t) => `${t.term}:${t.weight}`));
    expect(groups("strip the extension").slice(0, 2)).toEqual([
      ["strip:1", "remov:0.5", "delet:0.5", "drop:0.5", "without:0.5", "trim:0.5", "clear:0.5"],
      ["extension:1", "ext:0.5"],
    ]);
    expect(groups("dir")[0]).toEqual(["dir:1", "directory:0.5", "fold:0.5"]);
    // A synonym the query already has is not added again; a repeated word weighs more.
    expect(groups("remove delete")[0]).toEqual([
      "remov:1",
      "strip:0.5",
      "drop:0.5",
      "without:0.5",
      "trim:0.5",
      "clear:0.5",
      // remove is also in the unregister group (a word in two groups meets both).
      "unregist:0.5",
      "unsubscrib:0.5",
      "detach:0.5",
    ]);
    expect(groups("unregister every hook").slice(0, 2)).toEqual([
      ["unregist:1", "unsubscrib:0.5", "detach:0.5", "remov:0.5"],
      ["every:1", "all:0.5", "each:0.5"],
    ]);
    // "buffer" stems to "buf" (-er, then the doubled f), which is also its usual abbreviation.
    expect(groups("parse parse buffer").slice(0, 2)).toEqual([["pars:2", "read:1", "decod:1"], ["buf:1"]]);
    // A URL's query string is its search parameters; an overall figure is a total.
    expect(groups("query")[0]).toEqual(["query:1", "search:0.5"]);
    expect(groups("overall")[0]).toEqual(["overall:1", "total:0.5", "sum:0.5"]);
    expect(groups("the of")).toEqual([]);
  });

  it("a name also meets the name without its first word: type guards, getters, conversions", () => {
    expect(tokenize("isKyError")).toEqual(["isKyError", "is", "Ky", "Error", "KyError"]);
    expect(tokenize("input.toUpperCase()")).toEqual(["input", "toUpperCase", "to", "Upper", "Case", "UpperCase"]);
    expect(processTerm("UpperCase")).toBe(processTerm("uppercase"));
    // Two-word names are already their words.
    expect(tokenize("parseJson")).toEqual(["parseJson", "parse", "Json"]);
  });

  it("identifier words meet prose words: `JSON-parsing` and parseJson, `snake_case` and snakeCase", () => {
    const terms = (text: string): string[] =>
      [...new Set(tokenize(text).map((t) => processTerm(t)))].filter((t) => t !== null).sort();
    expect(terms("JSON-parsing")).toEqual(terms("parse Json"));
    expect(terms("parseJson")).toEqual(expect.arrayContaining(terms("JSON-parsing")));
    for (const name of ["snake_case", "snakeCase", "SNAKE_CASE"])
      expect(terms(name)).toEqual(expect.arrayContaining([...terms("snake case")]));
  });

  it("a phrase of the synonym table stands for its group's first word", () => {
    const groups = (q: string): string[][] => queryGroups(q).map((g) => g.terms.map((t) => `${t.term}:${t.weight}`));
    expect(groups("run all hooks at the same time").slice(0, 1)).toEqual([
      // "concurrently" stems to "concurrent": one term.
      ["parallel:1", "concurrent:0.5", "simultaneous:0.5"],
    ]);
    expect(groups("call them one after another")[0]![0]).toBe("serial:1");
    // The phrase's own words are not searched for.
    expect(groups("run all hooks at the same time").flat()).not.toContain("time:1");
    // Not in a row: no phrase.
    expect(groups("same hooks at a later time").flat()).toContain("time:1");
  });

  it("the query's first word is a lead: a name's first word (verb first), predicates for a yes/no question", () => {
    const lead = (q: string) => queryGroups(q).find((g) => g.coordinate === false);
    expect(lead("merge two header objects")?.terms.slice(0, 2)).toEqual([
      { term: "^merg", weight: 2 },
      { term: "^combin", weight: 1 },
    ]);
    expect(lead("is this error an HTTP error")?.terms.map((t) => t.term)).toEqual([
      "^is",
      "^has",
      "^can",
      "^should",
      "^support",
    ]);
    expect(lead("check whether a value is a plain object")?.terms.map((t) => t.term)).toContain("^is");
    expect(lead("the")).toBeUndefined();
    // An open question's word is neither a query word nor a lead; alone, it is still searched for.
    expect(queryGroups("which function is the cursor in").map((g) => g.terms[0]!.term)).toEqual(["function", "cursor"]);
    expect(lead("where is the config read")).toBeUndefined();
    expect(queryGroups("how many threads").map((g) => g.terms[0]!.term)).toEqual(["size", "thread"]);
    expect(queryGroups("where").map((g) => g.terms[0]!.term)).toEqual(["wher"]);
    expect(processTerm("^Is")).toBe("^is");
    expect(processTerm("^merges")).toBe("^merg");
  });

  it("a question's frame is no query word; after 'how do I' / 'how to' / 'is there a way to' the next word is the lead", () => {
    const lead = (q: string) => queryGroups(q).find((g) => g.coordinate === false)?.terms[0]?.term;
    const words = (q: string) =>
      queryGroups(q)
        .filter((g) => g.coordinate !== false)
        .map((g) => g.terms[0]!.term);
    expect(questionFrame("how do I parse a date")).toEqual({ rest: " parse a date", lead: "parse" });
    expect(lead("how do I parse a date")).toBe("^pars");
    expect(words("how do I parse a date")).toEqual(["pars", "date"]);
    expect(lead("how can we merge two header objects")).toBe("^merg");
    expect(lead("how to flatten nested hooks")).toBe("^flatten");
    expect(lead("is there a way to copy an object")).toBe("^copy");
    expect(words("is there a way to copy an object")).toEqual(["copy", "object"]);
    // A frame without a subject: no lead ("where is the config read" names a thing next).
    expect(questionFrame("where is the config read")).toEqual({ rest: " the config read" });
    expect(lead("where is the config read")).toBeUndefined();
    // No frame: "how many" and "which function" are questions about their words; a bare frame is searched as is.
    expect(questionFrame("how many threads")).toEqual({ rest: "how many threads" });
    expect(questionFrame("how do I")).toEqual({ rest: "how do I" });
    // Auxiliaries and pronouns are not searched for; alone, they are.
    expect(words("how deep do brackets nest")).toEqual(["deep", "bracket", "nest"]);
    expect(words("do")).toEqual(["do"]);
    // A light verb after an auxiliary and a subject inside a question says something is wanted, not what.
    expect(words("what error do I get when the request times out")).toEqual(["timeout", "error", "request"]);
    expect(words("which function should I use to merge two objects")).toEqual(["function", "merg", "two", "object"]);
    // Leading the query after a frame, or without one, the same verb is the action asked for.
    expect(words("how do I get the headers")).toEqual(["get", "head"]);
    expect(lead("how do I get the headers")).toBe("^get");
    expect(words("get the request headers")).toEqual(["get", "request", "head"]);
  });

  it("common programming vocabulary and abbreviations widen a query word", () => {
    const alternatives = (q: string) => queryGroups(q)[0]!.terms.map((t) => t.term);
    expect(alternatives("remove duplicates")).toEqual(expect.arrayContaining(["remov", "delet"]));
    expect(alternatives("unique")).toEqual(expect.arrayContaining(["distinct", "dedup"]));
    expect(alternatives("maximum")).toEqual(expect.arrayContaining(["max", "largest"]));
    expect(alternatives("ctx")).toContain("context");
    expect(alternatives("url")).toContain("uri");
    // A phrase stands for its word: "takes too long" is a timeout.
    expect(queryGroups("fail when the fetch takes too long").map((g) => g.terms[0]!.term)).toContain("timeout");
  });

  it("normalises terms: lower case, light stemming, stop words dropped", () => {
    expect(processTerm("Grows")).toBe("grow");
    expect(processTerm("growing")).toBe("grow");
    expect(processTerm("queries")).toBe("query");
    expect(processTerm("the")).toBeNull();
    expect(processTerm("x")).toBeNull();
  });

  it("stems word forms together and leaves look-alikes apart", () => {
    const same = (...words: string[]): void => expect(new Set(words.map(stem)).size).toBe(1);
    same("merge", "merges", "merged", "merging", "merger");
    same("parse", "parses", "parsed", "parsing", "parser");
    same("call", "calls", "called", "calling", "caller");
    same("run", "runs", "running", "runner");
    same("match", "matches", "matched");
    same("validate", "validates", "validation");
    same("query", "queries");
    same("recursive", "recursively");
    same("concurrent", "concurrently");
    same("local", "locally");
    same("obvious", "obviously");
    // British spelling doubles the l of an unstressed -el before -ed and -ing; -ll words keep theirs.
    same("cancel", "cancels", "canceled", "cancelled", "cancelling");
    same("label", "labelled", "labelling");
    same("model", "modelled");
    same("spell", "spelling", "spelled");
    same("install", "installed", "installing");
    same("dwell", "dwelling");
    for (const w of ["multiply", "assembly", "apply", "reply", "only"]) expect(stem(w)).toBe(w);
    for (const w of ["process", "status", "analysis", "pass", "use", "bus"]) expect(stem(w)).toBe(w);
    expect(stem("user")).not.toBe(stem("use")); // four letters: not an agent noun
  });
});

describe("chunkFile", () => {
  it("one chunk per definition with its doc comment and decorators; the documented header is the module", () => {
    const src =
      '/** Module doc. */\nimport x from "y";\n\n/** Adds. */\nexport function add(a: number) {\n  return a;\n}\n\nexport class K {\n  @dec()\n  run(n: number): void {\n    if (n) {\n      go(n);\n    }\n  }\n}\n';
    const chunks = chunkFile(src, false, "math");
    expect(chunks.map((c) => [c.kind, c.symbol, c.line_start, c.line_end])).toEqual([
      ["module", "math", 1, 3],
      ["function", "add", 4, 8],
      ["class", "K", 9, 9],
      ["method", "run", 10, 16],
    ]);
  });

  it("a documented member of a type or class is its own chunk, with its doc comment and signature as the head", () => {
    const src = [
      "/** Options. */",
      "export interface Options {",
      "  /** Milliseconds before giving up. */",
      "  timeout?: number;",
      "  retries: number;",
      "  /**",
      "   * Called on each retry.",
      "   */",
      "  onRetry(attempt: number): void;",
      "}",
      "",
    ].join("\n");
    const chunks = chunkFile(src, false, "options");
    expect(chunks.map((c) => [c.kind, c.symbol, c.line_start, c.line_end])).toEqual([
      ["type", "Options", 1, 2],
      ["property", "timeout", 3, 5],
      ["method", "onRetry", 6, 10],
    ]);
    // The head: the first sentence of the doc comment (its description) and the declaration line.
    expect(chunks[1]!.head).toBe("Milliseconds before giving up.\n  timeout?: number;");
    expect(chunks[0]!.head).toBe("Options.\nexport interface Options {");
    expect(chunks[2]!.head).toBe("Called on each retry.\n  onRetry(attempt: number): void;");
    // Undocumented members stay in the text of the chunk before them.
    expect(chunks[1]!.text).toContain("retries: number;");
  });

  it("member detection is linear on a long line under a doc comment", () => {
    const long = `/** Doc. */\n  ${"a".repeat(500_000)} ${"b".repeat(500_000)}\n`;
    expect(chunkFile(long, false).map((c) => c.symbol)).toEqual([undefined]);
  });

  it("Markdown: one chunk per heading; long chunks are split into windows", () => {
    const md = chunkFile("# A\ntext\n## B\nmore\n", true);
    expect(md.map((c) => [c.kind, c.symbol])).toEqual([
      ["heading", "A"],
      ["heading", "B"],
    ]);
    const long = chunkFile(Array.from({ length: 130 }, (_, i) => `line ${i}`).join("\n"), false);
    expect(long.map((c) => [c.line_start, c.line_end])).toEqual([
      [1, 60],
      [61, 120],
      [121, 130],
    ]);
  });
});
