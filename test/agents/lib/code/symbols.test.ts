import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dialectOf } from "../../../../agents/lib/code/language.js";
import { parseFile } from "../../../../agents/lib/code/parse.js";
import { sliceAt } from "../../../../agents/lib/code/slice.js";
import { FIXTURES, cursorOf } from "../../code-helpers.js";

const src = readFileSync(join(FIXTURES, "sample.ts"), "utf8");
const dialect = dialectOf(undefined, "sample.ts");

describe("symbol table", () => {
  const at = cursorOf(src, "this.count = before");
  const symbols = sliceAt(parseFile(src, dialect), at).symbols;
  const byName = new Map(symbols.map((s) => [s.name, s]));

  it("lists imports with their module, top-level declarations, parameters and locals", () => {
    expect(byName.get("readFile")).toMatchObject({
      kind: "import",
      source: "node:fs/promises",
      detail: "readFile",
      scope_depth: 0,
    });
    expect(byName.get("helpers")).toMatchObject({ kind: "import", source: "./helpers.js", detail: "*" });
    expect(byName.get("Logger")).toMatchObject({ kind: "import", source: "./log.js" });
    for (const [name, kind] of [
      ["RETRIES", "const"],
      ["Mode", "type"],
      ["Options", "interface"],
      ["Level", "enum"],
      ["add", "function"],
      ["Counter", "class"],
      ["settings", "const"],
    ] as const) {
      expect(byName.get(name)?.kind, name).toBe(kind);
    }
    expect(byName.get("times")).toMatchObject({ kind: "parameter", detail: "number" });
    expect(byName.get("i")).toMatchObject({ kind: "let" });
    expect(byName.get("before")).toMatchObject({ kind: "const" });
    expect(byName.get("RETRIES")).toMatchObject({ exported: true, line: cursorOf(src, "RETRIES").line });
  });

  it("leaves out other functions' locals and parameters", () => {
    expect(byName.has("text")).toBe(false);
    expect(byName.has("a")).toBe(false);
    expect(byName.has("args")).toBe(false);
  });

  it("sorts module scope first, then by name: byte-identical for the same input", () => {
    const depths = symbols.map((s) => s.scope_depth);
    expect([...depths].sort((a, b) => a - b)).toEqual(depths);
    const top = symbols.filter((s) => s.scope_depth === 0).map((s) => s.name);
    expect([...top].sort()).toEqual(top);
    const again = sliceAt(parseFile(src, dialect), at).symbols;
    expect(JSON.stringify(again)).toBe(JSON.stringify(symbols));
  });

  it("does not see a block's locals declared after the cursor", () => {
    const s = sliceAt(parseFile(src, dialect), cursorOf(src, "const text = await")).symbols.map((x) => x.name);
    expect(s).toContain("path");
    expect(s).toContain("limit");
    expect(s).not.toContain("text");
    expect(s).not.toContain("lines");
  });
});
