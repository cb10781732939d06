/** Candidate fixes for pyright's diagnostics (agents/lib/diagnose/python-fixes.ts): edits that apply where they should. */
import { describe, expect, it } from "vitest";
import {
  applyCandidate,
  moduleOf,
  namesIn,
  pythonCandidates,
  topLevelNames,
} from "../../../../agents/lib/diagnose/python-fixes.js";

const at = (line: number, column: number, length: number) => ({
  start: { line, column },
  end: { line, column: column + length },
});

describe("pythonCandidates", () => {
  const text = `"""Tools."""
from __future__ import annotations
import os, sys as system

# helpers
def fmt(value: float, *, width: int = 2) -> str:
    result = round(value, width)
    return str(reslt)
`;

  it("an undefined name: the close names in scope, and an import after the module's imports", () => {
    const c = pythonCandidates(
      { code: "reportUndefinedVariable", message: '"reslt" is not defined', ...at(8, 15, 5) },
      text,
      new Map(),
    );
    expect(c.map((x) => x.description)).toEqual(["Change spelling to 'result'"]);
    expect(applyCandidate(text, c[0]!)).toContain("    return str(result)\n");
    const imports = pythonCandidates(
      { code: "reportUndefinedVariable", message: '"Path" is not defined', ...at(7, 4, 4) },
      text,
      new Map([["pkg.paths", new Set(["Path", "other"])]]),
    );
    expect(imports.map((x) => x.new_text)).toEqual(["from pathlib import Path\n", "from pkg.paths import Path\n"]);
    // After the docstring, the __future__ import and the others: line 4.
    expect(imports[0]!.start).toEqual({ line: 4, column: 0 });
    expect(applyCandidate(text, imports[0]!).split("\n")[3]).toBe("from pathlib import Path");
  });

  it("an unused import: its line removed, or only its name from a list", () => {
    const whole = pythonCandidates(
      { code: "reportUnusedImport", message: 'Import "annotations" is not accessed', ...at(2, 23, 11) },
      text,
      new Map(),
    );
    expect(applyCandidate(text, whole[0]!)).not.toContain("__future__");
    expect(applyCandidate(text, whole[0]!).split("\n")[1]).toBe("import os, sys as system");
    const one = pythonCandidates(
      { code: "reportUnusedImport", message: 'Import "system" is not accessed', ...at(3, 18, 6) },
      text,
      new Map(),
    );
    expect(one[0]!.description).toBe("Remove 'system' from the import");
    expect(applyCandidate(text, one[0]!).split("\n")[2]).toBe("import os");
  });

  it("an attribute that does not exist: the close members the checker offers", () => {
    const c = pythonCandidates(
      {
        code: "reportAttributeAccessIssue",
        message: 'Cannot access attribute "aera" for class "Circle"',
        ...at(6, 12, 4),
      },
      "x\n",
      new Map(),
      ["area", "radius", "__init__"],
    );
    expect(c.map((x) => [x.new_text, x.start])).toEqual([["area", { line: 6, column: 12 }]]);
  });
});

describe("names", () => {
  it("the names a file binds, and a module's top-level ones", () => {
    const names = namesIn(
      "import a.b as ab\nfrom m import (x, y as z)\ndef f(p, q=1, *rest):\n    for i, j in p: pass\n",
    );
    for (const n of ["ab", "x", "z", "f", "p", "q", "rest", "i", "j"]) expect(names).toContain(n);
    expect([...topLevelNames("def f():\n    inner = 1\nclass C: pass\nVALUE: int = 3\n")]).toEqual(["f", "C", "VALUE"]);
    expect(moduleOf("pkg/sub/__init__.py")).toBe("pkg.sub");
    expect(moduleOf("pkg/mod.py")).toBe("pkg.mod");
    expect(moduleOf("my-scripts/x.py")).toBeUndefined();
  });
});
