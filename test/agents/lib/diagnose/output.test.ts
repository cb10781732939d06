import { describe, expect, it } from "vitest";
import { OUTPUT_LIMITS, parseOutput } from "../../../../agents/lib/diagnose/output.js";
import { decodeSourceMap, originalPosition } from "../../../../agents/lib/diagnose/sourcemap.js";

describe("parseOutput", () => {
  it("reads tsc errors in both formats", () => {
    const p = parseOutput(
      "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n" +
        "\u001b[96msrc/b.ts\u001b[0m:10:1 - \u001b[91merror\u001b[0m TS2304: Cannot find name 'x'.\n",
    );
    expect(p.tool).toBe("tsc");
    expect(p.compile).toEqual([
      {
        file: "src/a.ts",
        line: 3,
        column: 6,
        code: "TS2322",
        message: "Type 'string' is not assignable to type 'number'.",
        severity: "error",
      },
      { file: "src/b.ts", line: 10, column: 0, code: "TS2304", message: "Cannot find name 'x'.", severity: "error" },
    ]);
  });

  it("reads a vitest assertion failure: test name, expected vs actual, frames innermost first", () => {
    const out = [
      " FAIL  test/math.test.ts > math > adds",
      "AssertionError: expected 5 to be 4 // Object.is equality",
      "",
      "- Expected",
      "+ Received",
      "",
      "- 4",
      "+ 5",
      "",
      " ❯ test/math.test.ts:6:22",
      "      4|   it('adds', () => {",
      "      5|     const r = add(2, 2);",
      "      6|     expect(r).toBe(4);",
      "       |                ^",
      "",
      " Test Files  1 failed (1)",
    ].join("\n");
    const p = parseOutput(out);
    expect(p.tool).toBe("vitest");
    expect(p.failures).toEqual([
      {
        test: "test/math.test.ts > math > adds",
        error: "AssertionError",
        message: "expected 5 to be 4 // Object.is equality",
        expected: "4",
        actual: "5",
        frames: [{ raw: "❯ test/math.test.ts:6:22", file: "test/math.test.ts", line: 6, column: 21 }],
      },
    ]);
  });

  it("reads a Node stack trace with async and anonymous frames", () => {
    const p = parseOutput(
      "TypeError: Cannot read properties of undefined (reading 'x')\n" +
        "    at parse (/w/src/p.ts:12:9)\n" +
        "    at async run (file:///w/dist/run.js:3:5)\n" +
        "    at node:internal/main/run_main_module:28:49\n",
    );
    expect(p.tool).toBe("node");
    expect(p.failures[0]).toMatchObject({
      error: "TypeError",
      message: "Cannot read properties of undefined (reading 'x')",
    });
    expect(p.failures[0]!.frames.map((f) => [f.function, f.file, f.line, f.column])).toEqual([
      ["parse", "/w/src/p.ts", 12, 8],
      ["run", "file:///w/dist/run.js", 3, 4],
      [undefined, "node:internal/main/run_main_module", 28, 48],
    ]);
  });

  it("reads jest's expected/received and node:test's strictEqual", () => {
    const jest = parseOutput(
      "  ● sum › adds\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 4\n    Received: 5\n\n      at Object.<anonymous> (test/sum.test.js:3:20)\n\nTests:       1 failed, 1 total\n",
    );
    expect(jest.tool).toBe("jest");
    expect(jest.failures).toEqual([
      {
        test: "sum > adds",
        message: "expect(received).toBe(expected)",
        expected: "4",
        actual: "5",
        frames: [
          {
            raw: "at Object.<anonymous> (test/sum.test.js:3:20)",
            function: "Object.<anonymous>",
            file: "test/sum.test.js",
            line: 3,
            column: 19,
          },
        ],
      },
    ]);
    const nodeTest = parseOutput(
      "✖ adds (1.2ms)\n  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n  5 !== 4\n\n      at TestContext.<anonymous> (file:///w/test/a.test.js:5:10)\n      at Test.runInAsyncScope (node:async_hooks:206:9)\n",
    );
    expect(nodeTest.tool).toBe("node:test");
    expect(nodeTest.failures[0]).toMatchObject({ test: "adds", error: "AssertionError", expected: "4", actual: "5" });
  });

  it("reads a Python traceback, innermost frame first", () => {
    const p = parseOutput(
      'Traceback (most recent call last):\n  File "/w/app.py", line 9, in <module>\n    main()\n  File "/w/lib/core.py", line 4, in main\n    return 1 / 0\nZeroDivisionError: division by zero\n',
    );
    expect(p.tool).toBe("python");
    expect(p.failures).toEqual([
      {
        error: "ZeroDivisionError",
        message: "division by zero",
        frames: [
          { raw: 'File "/w/lib/core.py", line 4, in main', file: "/w/lib/core.py", line: 4, function: "main" },
          { raw: 'File "/w/app.py", line 9, in <module>', file: "/w/app.py", line: 9, function: "<module>" },
        ],
      },
    ]);
  });

  it("says so for output from no known tool, and scans a long log at its head and tail only", () => {
    expect(parseOutput("all good\nnothing here").notes[0]).toMatch(/not from a tool this agent knows/);
    const filler = "x".repeat(100) + "\n";
    const log = `${"src/a.ts(1,1): error TS1005: ';' expected.\n"}${filler.repeat(100_000)}Error: late\n    at f (/w/src/late.ts:2:3)\n`;
    const p = parseOutput(log);
    expect(p.skipped_chars).toBe(log.length - OUTPUT_LIMITS.maxScanChars);
    expect(p.compile).toHaveLength(1);
    expect(p.failures[0]!.frames[0]).toMatchObject({ file: "/w/src/late.ts", line: 2 });
    expect(p.notes[0]).toMatch(/were not scanned/);
  });
});

describe("source maps", () => {
  it("decodes VLQ mappings to the original line and column", () => {
    // Generated line 1 col 0 → source 0 line 1 col 0; generated line 2 col 4 → line 3 col 2.
    const map = decodeSourceMap(JSON.stringify({ version: 3, sources: ["../src/a.ts"], mappings: "AAAA;IAEE" }));
    expect(typeof map).toBe("object");
    if (typeof map === "string") return;
    expect(originalPosition(map, 2, 10)).toEqual({ source: "../src/a.ts", line: 3, column: 2 });
    expect(originalPosition(map, 1, 0)).toEqual({ source: "../src/a.ts", line: 1, column: 0 });
    expect(originalPosition(map, 9, 0)).toBeUndefined();
  });

  it("names what is wrong with a bad map", () => {
    expect(decodeSourceMap("{not json")).toMatch(/does not parse as JSON/);
    expect(decodeSourceMap(JSON.stringify({ version: 2, sources: [], mappings: "" }))).toMatch(/not a version 3/);
    expect(decodeSourceMap(JSON.stringify({ version: 3, sources: ["a"], mappings: "A!AA" }))).toMatch(/not base64 VLQ/);
  });
});
