/**
 * Python documents re-read keystroke by keystroke (agents/lib/code/languages/python/incremental.ts):
 * after every edit the kept document equals a fresh read of the whole text, whichever path produced it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { readPython } from "../../../../agents/lib/code/languages/python/document.js";
import { PythonDocuments } from "../../../../agents/lib/code/languages/python/incremental.js";
import { loadPythonParser } from "../../../../agents/lib/code/languages/python/parser.js";

const MODULE = `"""Shapes."""
import os
from typing import Any

LIMIT = 3


class Shape:
    """A shape."""

    kind = "shape"

    def __init__(self, radius: float) -> None:
        self.radius = radius

    def area(self, factor: float) -> float:
        total = self.radius * factor
        return total


@decorate
def helper(items):
    for item in items:
        print(item)
    return len(items)


__all__ = ["Shape", "helper"]


class Square(Shape):
    def side(self):
        return self.radius * 2
`;

/** `text` with `insert` typed at the first occurrence of `at` (after it when `after`). */
function typeAt(text: string, at: string, insert: string, after = false): string {
  const i = text.indexOf(at) + (after ? at.length : 0);
  return text.slice(0, i) + insert + text.slice(i);
}

beforeAll(async () => {
  await loadPythonParser();
});

describe("PythonDocuments", () => {
  it("keeps the document equal to a fresh read while a statement is typed in a method", () => {
    const docs = new PythonDocuments();
    docs.get("k", MODULE);
    const line = "        value = self.radius + os.sep";
    for (let k = 1; k <= line.length; k++) {
      const text = typeAt(MODULE, "        return total", `${line.slice(0, k)}\n`);
      expect(docs.get("k", text)).toEqual(readPython(text));
    }
    // Each keystroke re-read the method's class only, those that leave the statement broken too.
    expect(docs.stats().partial).toBe(line.length);
    // In the last definition of the file, a line at a time, deleted again.
    const tail = ["        if self.radius > (", "            LIMIT", "        ):", "            return 0"];
    for (let k = 1; k <= tail.length; k++) {
      const text = `${MODULE}${tail.slice(0, k).join("\n")}\n`;
      expect(docs.get("k", text)).toEqual(readPython(text));
    }
    expect(docs.get("k", MODULE)).toEqual(readPython(MODULE));
  });

  it("moves what follows the edit: declarations, scopes, bindings, __all__'s line", () => {
    const docs = new PythonDocuments();
    docs.get("k", MODULE);
    const text = typeAt(MODULE, "        print(item)\n", "        seen = set()\n        seen.add(item)\n", true);
    const doc = docs.get("k", text);
    expect(docs.stats().partial).toBe(1);
    expect(doc).toEqual(readPython(text));
    const square = doc.outline.find((d) => d.name === "Square")!;
    expect(square.line_start).toBe(readPython(MODULE).outline.find((d) => d.name === "Square")!.line_start + 2);
    expect(doc.scopes.find((s) => s.name === "helper")!.names.map((n) => n.name)).toContain("seen");
  });

  it("reads the whole text for an edit in a header, at module level, or a broken buffer, and stays equal", () => {
    const docs = new PythonDocuments();
    docs.get("k", MODULE);
    const steps = [
      typeAt(MODULE, "(self, factor: float)", ", scale", true),
      typeAt(MODULE, "LIMIT = 3\n", "OTHER = 4\n", true),
      typeAt(MODULE, "        return total", "        x = (\n"),
      typeAt(MODULE, "        return total", "        x = (1)\n"),
      typeAt(MODULE, "LIMIT = 3", "x = (\n"),
      typeAt(MODULE, "        return len(items)", "        y = [i for\n"),
      typeAt(MODULE, '__all__ = ["Shape", "helper"', ', "Square"', true),
      MODULE,
    ];
    for (const text of steps) expect(docs.get("k", text)).toEqual(readPython(text));
    const s = docs.stats();
    expect(s.reparsed + s.full).toBeGreaterThanOrEqual(4);
  });

  it("keeps documents apart by key and bounds how many it keeps", () => {
    const docs = new PythonDocuments(2);
    docs.get("a", MODULE);
    docs.get("b", "x = 1\n");
    docs.get("c", "y = 2\n");
    expect(docs.stats().entries).toBe(2);
    expect(docs.last("a")).toBeUndefined();
    expect(docs.last("c")?.bindings.map((b) => b.name)).toEqual(["y"]);
    docs.clear();
    expect(docs.stats().entries).toBe(0);
  });
});
