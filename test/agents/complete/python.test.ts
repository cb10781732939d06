/**
 * agent-complete on Python (docs/agents.md, "Python completion"): the syntax gate and the symbol table
 * in-process. The served pipeline (the tiny model's answer or complete-lite's after the gate's retries,
 * and complete-lite's answer without a model) is asserted in main.test.ts, on that suite's agents.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { checkPython, pythonSymbolsBlock } from "../../../agents/complete/python.js";
import { loadLanguage } from "../../../agents/lib/code/languages/registry.js";
import type { PythonDocument } from "../../../agents/lib/code/languages/python/index.js";
import { PY_SOURCE as SOURCE } from "./python-sample.js";

describe("agent-complete on Python: the syntax gate and the symbol table", () => {
  let doc: PythonDocument;
  beforeAll(async () => {
    doc = (await loadLanguage("python")).parse(SOURCE) as PythonDocument;
  });
  const offset = SOURCE.indexOf("return full");
  it("passes a completion that parses and fails one that does not", () => {
    expect(checkPython(SOURCE, offset, "full = full + '/'\n        ", doc).ok).toBe(true);
    const bad = checkPython(SOURCE, offset, "full = (full +\n        ", doc);
    expect(bad.ok).toBe(false);
    expect(bad.error).toBeDefined();
  });
  it("lists imports, classes with their methods, and constants", () => {
    const block = pythonSymbolsBlock(doc);
    expect(block).toContain("# import os\n");
    expect(block).toContain("# from typing import Any\n");
    expect(block).toContain("# class Store");
    expect(block).toContain("#     def path(self, name: str) -> str");
    expect(block).toContain("LIMIT");
  });
});
