import { beforeAll, describe, expect, it } from "vitest";
import { AipError } from "../../../../protocol/errors.js";
import { dialectOf, LANGUAGES } from "../../../../agents/lib/code/language.js";
import { languageByPath, loadLanguage, requestLanguage } from "../../../../agents/lib/code/languages/registry.js";
import type { CodeLanguage, Declaration } from "../../../../agents/lib/code/languages/types.js";

let py: CodeLanguage;
let ts: CodeLanguage;
beforeAll(async () => {
  py = await loadLanguage("python");
  ts = await loadLanguage("typescript");
});

const SOURCE = `"""Tools for shapes.

More text.
"""
from __future__ import annotations
import os.path
import json as j
from typing import overload, Optional
from .base import Base as B, helper

__all__ = ["Shape", "area"]
__all__ += ("scale",)
__all__.extend(["Point"])
__all__.append("origin")

MAX_SIDES: int = 12
"""The most sides a shape may have."""
_cache = {}

class Shape(B, metaclass=Meta):
    """A shape. It has sides."""

    sides = 0

    @property
    def name(self) -> str:
        """The shape's name."""
        return "shape"

    class Inner:
        def deep(self): ...

    async def grow(self, by: float = 1.0, *, twice=False) -> "Shape":
        x = by * 2
        for i, j2 in []:
            pass
        return self

@overload
def area(s: int) -> int: ...
@overload
def area(s: str) -> str: ...
def area(s, /, *rest, **kw):
    """Area of a shape."""
    with open(s) as fh:
        y = (z := 3)
    return s

@dataclass(frozen=True)
class Point:
    x: int = 0
    y: int = 0
`;

describe("the language registry", () => {
  it("infers python from .py and .pyi, and names the accepted languages for an unknown one", () => {
    expect(requestLanguage(undefined, "pkg/mod.py")).toBe("python");
    expect(requestLanguage(undefined, "pkg/mod.pyi")).toBe("python");
    expect(requestLanguage("Python")).toBe("python");
    expect(requestLanguage(undefined, "a.tsx")).toBe("typescript");
    expect(languageByPath("x.rs")).toBeUndefined();
    expect(LANGUAGES).toContain("python");
    try {
      requestLanguage("cobol");
      expect.unreachable();
    } catch (err) {
      expect((err as AipError).code).toBe("AIP_ERR_INVALID_FIELD");
      expect((err as AipError).message).toMatch(/typescript, javascript, python.*"cobol"/);
    }
  });

  it("keeps TypeScript-only paths from parsing Python as TypeScript", () => {
    expect(() => dialectOf("python")).toThrow(/python is not served by this agent/);
    expect(() => dialectOf(undefined, "a/b.py")).toThrow(/context.file_path: python/);
    expect(dialectOf(undefined, "a/b.ts")).toEqual({ language: "typescript", jsx: false });
  });
});

describe("Python through the language interface", () => {
  it("outlines classes, methods, nested classes, decorators, async, overloads and constants", () => {
    const doc = py.parse(SOURCE, "shapes.py");
    expect(doc.diagnostics).toEqual([]);
    const outline = py.outline(doc);
    const byName = (n: string): Declaration[] => outline.filter((d) => d.name === n);
    const shape = byName("Shape")[0]!;
    expect(shape).toMatchObject({ kind: "class", bases: ["B", "metaclass=Meta"], summary: "A shape.", line_start: 20 });
    expect(shape.children.map((c) => `${c.kind}:${c.name}`)).toEqual([
      "property:sides",
      "method:name",
      "class:Inner",
      "method:grow",
    ]);
    const name = shape.children[1]!;
    expect(name).toMatchObject({
      decorators: ["property"],
      returns: "str",
      doc: "The shape's name.",
      container: "Shape",
    });
    const grow = shape.children[3]!;
    expect(grow.async).toBe(true);
    expect(grow.params).toEqual([
      { name: "self", kind: "positional" },
      { name: "by", kind: "positional", type: "float", default: "1.0" },
      { name: "twice", kind: "keyword_only", default: "False" },
    ]);
    expect(grow.signature).toBe('async def grow(self, by: float = 1.0, *, twice=False) -> "Shape"');
    expect(shape.children[2]!.children.map((c) => c.name)).toEqual(["deep"]);
    const areas = byName("area");
    expect(areas.map((a) => a.decorators)).toEqual([["overload"], ["overload"], []]);
    expect(areas[2]!.params!.map((p) => `${p.kind}:${p.name}`)).toEqual([
      "positional_only:s",
      "vararg:rest",
      "kwarg:kw",
    ]);
    expect(byName("MAX_SIDES")[0]).toMatchObject({
      kind: "constant",
      type: "int",
      value: "12",
      summary: "The most sides a shape may have.",
    });
    expect(byName("Point")[0]).toMatchObject({ decorators: ["dataclass(frozen=True)"] });
    expect(byName("Point")[0]!.children.map((c) => c.name)).toEqual(["x", "y"]);
  });

  it("reads imports and every __all__ form", () => {
    const doc = py.parse(SOURCE);
    const imports = py.imports(doc);
    expect(imports.map((i) => [i.from, i.level, i.names.map((n) => `${n.imported}>${n.name}`).join(",")])).toEqual([
      ["__future__", 0, "annotations>annotations"],
      ["os.path", 0, "os>os"],
      ["json", 0, "json>j"],
      ["typing", 0, "overload>overload,Optional>Optional"],
      [".base", 1, "Base>B,helper>helper"],
    ]);
    const ex = py.exports(doc);
    expect(ex.declared).toEqual(["Shape", "area", "scale", "Point", "origin"]);
    expect(ex.forms).toEqual(["=", "+=", ".extend", ".append"]);
    expect(ex.dynamic).toBe(false);
    expect(ex.implicit).toEqual([
      "annotations",
      "os",
      "j",
      "overload",
      "Optional",
      "B",
      "helper",
      "MAX_SIDES",
      "Shape",
      "area",
      "Point",
    ]);
  });

  it("finds the declaration at a cursor and the names in scope there", () => {
    const doc = py.parse(SOURCE);
    const at = SOURCE.indexOf("x = by * 2");
    expect(py.declarationAt(doc, at)).toMatchObject({ name: "grow", container: "Shape" });
    const names = py.namesInScope(doc, at);
    const first = names.slice(0, 6).map((n) => `${n.kind}:${n.name}`);
    expect(first).toEqual(["parameter:self", "parameter:by", "parameter:twice", "local:x", "local:i", "local:j2"]);
    // the class body's names are not visible inside its methods
    expect(names.find((n) => n.name === "sides")).toBeUndefined();
    expect(names.find((n) => n.name === "MAX_SIDES")).toMatchObject({ kind: "module", line: 16 });
    expect(names.find((n) => n.name === "len")).toMatchObject({ kind: "builtin" });
    const inArea = py.namesInScope(doc, SOURCE.indexOf("return s\n"));
    expect(inArea.slice(0, 6).map((n) => n.name)).toEqual(["s", "rest", "kw", "fh", "y", "z"]);
  });

  it("makes search chunks of functions, classes and methods with their docstrings", () => {
    const chunks = py.chunks(py.parse(SOURCE));
    expect(chunks.map((c) => `${c.container}.${c.name}`)).toContain("Shape.grow");
    const line = SOURCE.slice(0, SOURCE.indexOf("def area(s, /")).split("\n").length;
    expect(chunks.find((c) => c.name === "area" && c.doc)).toMatchObject({ doc: "Area of a shape.", line_start: line });
  });

  it("reports a broken buffer's syntax errors and still outlines what it declares", () => {
    const broken =
      "def ok(a):\n    return a\n\ndef bad(x:\n    return (x +\n\nclass After:\n    def m(self):\n        pass\n";
    const doc = py.parse(broken);
    expect(doc.diagnostics.length).toBeGreaterThan(0);
    const names = py.declarations(doc).map((d) => `${d.name}@${d.line_start}`);
    expect(names).toContain("ok@1");
    expect(names).toContain("After@7");
    expect(names).toContain("m@8");
    expect(names).toContain("bad@4");
    expect(doc.diagnostics[0]!.start).toBe(broken.indexOf("def bad"));
  });

  it("an indentation error is a diagnostic with its line", () => {
    const doc = py.parse("def f():\n    x = 1\n      y = 2\n    return x\n");
    expect(doc.diagnostics).toEqual([{ start: 25, message: "unexpected indent" }]);
    expect(py.declarations(doc).map((d) => d.name)).toContain("f");
  });
});

describe("TypeScript through the same interface", () => {
  it("outlines, imports, exports and finds the function at a cursor", () => {
    const src = `import { a as b } from "./x";\n/** Adds. */\nexport function add(x: number, y = 1): number { return x + y; }\nexport class K { m(): void {} }\n`;
    const doc = ts.parse(src, "m.ts");
    expect(ts.outline(doc).map((d) => `${d.kind}:${d.name}`)).toEqual(["function:add", "class:K"]);
    expect(ts.outline(doc)[0]).toMatchObject({ summary: "Adds.", line_start: 2 });
    expect(ts.imports(doc)[0]).toMatchObject({ from: "./x", names: [{ name: "b", imported: "a" }] });
    expect(ts.exports(doc).declared).toEqual(["add", "K"]);
    expect(ts.declarationAt(doc, src.indexOf("return x"))).toMatchObject({ name: "add" });
    expect(ts.namesInScope(doc, src.indexOf("return x")).map((n) => n.name)).toEqual(["x", "y", "add", "K", "b"]);
  });
});
