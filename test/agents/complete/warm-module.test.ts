/** The warm-up's module and cursor positions (agents/complete/warm-module.ts): it parses, formats, and every position is inside a function. */
import { describe, expect, it } from "vitest";
import { dialectOf } from "../../../agents/lib/code/language.js";
import { parseFile } from "../../../agents/lib/code/parse.js";
import { sliceAt } from "../../../agents/lib/code/slice.js";
import { formatChecked } from "../../../agents/complete/check.js";
import { WARM_MODULE, warmLines } from "../../../agents/complete/warm-module.js";

describe("warm-up module", () => {
  const ts = dialectOf("typescript");

  it("parses and prettier formats it", async () => {
    expect(parseFile(WARM_MODULE, ts).program.body.length).toBeGreaterThan(15);
    await expect(formatChecked(WARM_MODULE, ts)).resolves.toContain("export class Store");
  });

  it("types at 20+ lines, each inside a function, and the typed comments keep it parseable", () => {
    const positions = warmLines();
    expect(positions.length).toBeGreaterThanOrEqual(20);
    const lines = WARM_MODULE.split("\n");
    for (const line of positions) {
      lines[line - 1] += " // warm" + "m".repeat(9);
      const source = lines.join("\n");
      const parsed = parseFile(source, ts);
      const slice = sliceAt(parsed, { line, column: lines[line - 1]!.length });
      expect(slice.fn, `line ${line}: ${lines[line - 1]}`).toBeDefined();
    }
  });
});
