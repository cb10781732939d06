import { describe, expect, it } from "vitest";
import { chunkFile } from "../../../agents/search/chunk.js";
import { processTerm, splitIdentifier, tokenize } from "../../../agents/search/tokenize.js";

describe("tokenize", () => {
  it("splits camelCase, PascalCase acronyms, snake_case and digits, keeping the whole identifier", () => {
    expect(splitIdentifier("adaptivePoolGrow2")).toEqual(["adaptive", "Pool", "Grow", "2"]);
    expect(splitIdentifier("HTTPServer")).toEqual(["HTTP", "Server"]);
    expect(splitIdentifier("max_concurrent_v8")).toEqual(["max", "concurrent", "v", "8"]);
    expect(tokenize("const p95Ms = pool_size;")).toEqual(["const", "p95Ms", "p", "95", "Ms", "pool_size", "pool", "size"]);
  });

  it("normalises terms: lower case, light stemming, stop words dropped", () => {
    expect(processTerm("Grows")).toBe("grow");
    expect(processTerm("growing")).toBe("grow");
    expect(processTerm("queries")).toBe("query");
    expect(processTerm("the")).toBeNull();
    expect(processTerm("x")).toBeNull();
  });
});

describe("chunkFile", () => {
  it("one chunk per definition with its doc comment and decorators; the documented header is the module", () => {
    const src = "/** Module doc. */\nimport x from \"y\";\n\n/** Adds. */\nexport function add(a: number) {\n  return a;\n}\n\nexport class K {\n  @dec()\n  run(n: number): void {\n    if (n) {\n      go(n);\n    }\n  }\n}\n";
    const chunks = chunkFile(src, false, "math");
    expect(chunks.map((c) => [c.kind, c.symbol, c.line_start, c.line_end])).toEqual([
      ["module", "math", 1, 3],
      ["function", "add", 4, 8],
      ["class", "K", 9, 9],
      ["method", "run", 10, 16],
    ]);
  });

  it("Markdown: one chunk per heading; long chunks are split into windows", () => {
    const md = chunkFile("# A\ntext\n## B\nmore\n", true);
    expect(md.map((c) => [c.kind, c.symbol])).toEqual([["heading", "A"], ["heading", "B"]]);
    const long = chunkFile(Array.from({ length: 130 }, (_, i) => `line ${i}`).join("\n"), false);
    expect(long.map((c) => [c.line_start, c.line_end])).toEqual([[1, 60], [61, 120], [121, 130]]);
  });
});
