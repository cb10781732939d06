/** summarize on Python (docs/agents.md "summarize"): outline constructs, every __all__ form, packages followed, broken buffers. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../../helpers.js";
import { SUMMARIZE, startAgent, type Json, type RunningAgent } from "../code-helpers.js";

const FILES: Record<string, string> = {
  "src/pkg/__init__.py": [
    '"""The package. It re-exports."""',
    "from .shapes import *",
    "from .util import helper as assist",
    "from . import extra",
    "from .missing import *",
    "from .cyc_a import *",
    "_private = 1",
  ].join("\n"),
  "src/pkg/shapes.py": [
    '__all__ = ["Shape"]',
    "__all__ += ['area']",
    "class Shape: pass",
    "def area(s): return 0",
    "def hidden(): pass",
  ].join("\n"),
  "src/pkg/util.py": "def helper():\n    '''Helps.'''\n",
  "src/pkg/extra.py": "X = 1\n",
  "src/pkg/cyc_a.py": "from .cyc_b import *\nA = 1\n",
  "src/pkg/cyc_b.py": "from .cyc_a import *\nB = 2\n",
  "src/pkg/nsp/mod.py": "def in_namespace(): pass\n",
  "src/pkg/uses_ns.py": "from .nsp.mod import *\n",
  "src/pkg2/__init__.py": "from .b import x\n",
  "src/pkg2/b.py": "from pkg2.helpers import h\nimport operator\nx = 1\ndel operator\n",
  "src/pkg2/helpers.py": "h = 1\n",
  "src/pkg2/dyn.py": "import operator\nlocals().update(vars(operator))\nKEEP = 1\ndel operator\n",
  "src/pkg2/hooked.py": "from . import _hook\nY = 1\n",
  "src/pkg2/_hook.py": "import sys\nsys.meta_path.append(object())\n",
  "src/pkg/tuple_all.py": "__all__ = ('a', 'b')\n__all__.extend(['c'])\n__all__ = __all__ + ['d']\na = b = c = d = 1\n",
};

describe("summarize on Python", () => {
  let agent: RunningAgent;
  let ws: { dir: string; cleanup: () => void };
  const ask = async (context: Json): Promise<Json> =>
    (await agent.invoke({ action: "summarize", context, constraints: {} })) as Json;
  beforeAll(async () => {
    ws = tempDir("aipx-");
    for (const [rel, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(ws.dir, rel)), { recursive: true });
      writeFileSync(join(ws.dir, rel), text);
    }
    agent = await startAgent(SUMMARIZE);
  }, 60_000);
  afterAll(async () => {
    await agent.stop();
    ws.cleanup();
  });

  it("follows a package's star, renamed and submodule imports; lists the missing and the cyclic", async () => {
    const r = await ask({ workspace_root: ws.dir, file_path: "src/pkg/__init__.py" });
    expect(r.status).toBe("success");
    expect(r.payload.language).toBe("python");
    const names = (r.payload.outline.exports as Json[]).map((e) => e.name).sort();
    // shapes' __all__ (not `hidden`), the alias, the submodules bound by loading them (cyc_b is loaded
    // by cyc_a while the package runs), the cycle's names once
    expect(names).toEqual(["A", "B", "Shape", "area", "assist", "cyc_a", "cyc_b", "extra", "shapes", "util"].sort());
    const unresolved = r.payload.outline.unresolved_exports as Json[];
    expect(unresolved.find((u) => u.from === ".missing")).toMatchObject({
      line: 5,
      reason: "no such module in the workspace",
    });
    expect(unresolved.find((u) => String(u.reason).startsWith("cyclic import"))).toBeDefined();
    expect(r.payload.summary).toContain("The package.");
  });

  it("binds submodules loaded by other submodules, drops deleted names", async () => {
    const pkg = await ask({ workspace_root: ws.dir, file_path: "src/pkg2/__init__.py" });
    // `helpers` is loaded by b (`from pkg2.helpers import h`) while pkg2 runs, as Python binds it
    expect((pkg.payload.outline.exports as Json[]).map((e) => e.name).sort()).toEqual(["b", "helpers", "x"]);
    const b = await ask({ workspace_root: ws.dir, file_path: "src/pkg2/b.py" });
    expect((b.payload.outline.exports as Json[]).map((e) => e.name)).toEqual(["h", "x"]);
  });

  it("says when a module's namespace is written at run time instead of guessing its names", async () => {
    const dyn = await ask({ workspace_root: ws.dir, file_path: "src/pkg2/dyn.py" });
    expect((dyn.payload.outline.exports as Json[]).map((e) => e.name)).toEqual(["KEEP"]);
    expect(dyn.payload.outline.unresolved_exports).toEqual([
      expect.objectContaining({ from: "locals().update(…)", line: 2, reason: expect.stringContaining("run time") }),
    ]);
    const hooked = await ask({ workspace_root: ws.dir, file_path: "src/pkg2/hooked.py" });
    expect((hooked.payload.outline.exports as Json[]).map((e) => e.name)).toEqual(["Y"]);
    expect(hooked.payload.outline.unresolved_exports).toEqual([
      expect.objectContaining({ from: ".", line: 1, reason: expect.stringContaining("import hook") }),
    ]);
  });

  it("reads __all__ as a tuple, extended, and concatenated", async () => {
    const r = await ask({ workspace_root: ws.dir, file_path: "src/pkg/tuple_all.py" });
    expect((r.payload.outline.exports as Json[]).map((e) => e.name)).toEqual(["a", "b", "c", "d"]);
  });

  it("follows a star import into a namespace package (no __init__.py)", async () => {
    const r = await ask({ workspace_root: ws.dir, file_path: "src/pkg/uses_ns.py" });
    expect((r.payload.outline.exports as Json[]).map((e) => e.name)).toEqual(["in_namespace"]);
    expect(r.payload.outline.unresolved_exports).toEqual([]);
  });

  it("outlines a buffer without a workspace, language inferred from the .py path, public names without __all__", async () => {
    const source = [
      "import os",
      "from typing import overload",
      "LIMIT: int = 3",
      "class Box(Base):",
      '    """A box."""',
      "    @property",
      "    def size(self) -> int:",
      "        return 1",
      "    @staticmethod",
      "    def make(*items, **opts): ...",
      "async def fetch(url: str, timeout: float = 1.0) -> bytes:",
      '    """Fetch a URL. Slowly."""',
      "def _private(): pass",
    ].join("\n");
    const r = await ask({ source_code: source, file_path: "box.py" });
    expect(r.status).toBe("success");
    const o = r.payload.outline;
    expect((o.exports as Json[]).map((e) => `${e.kind}:${e.name}`)).toEqual([
      "import:os",
      "import:overload",
      "constant:LIMIT",
      "class:Box",
      "function:fetch",
    ]);
    expect(o.classes[0]).toMatchObject({ name: "Box", extends: "Base", doc: "A box.", line_start: 4, line_end: 10 });
    expect(o.classes[0].members.map((m: Json) => `${m.kind}:${m.name}:${m.static}`)).toEqual([
      "getter:size:false",
      "method:make:true",
    ]);
    expect(o.functions[0]).toMatchObject({
      name: "fetch",
      async: true,
      returns: "bytes",
      doc: "Fetch a URL.",
      params: [
        { name: "url", type: "str", optional: false, rest: false },
        { name: "timeout", type: "float", default: "1.0", optional: true, rest: false },
      ],
    });
    expect(o.consts[0]).toMatchObject({ name: "LIMIT", type: "int", exported: true, line: 3 });
  });

  it("answers a broken buffer with partial and diagnostics, still naming what parses", async () => {
    const source = "def ok(a):\n    return a\n\ndef broken(x:\n    return [x,\n\nclass After:\n    def m(self): pass\n";
    const r = await ask({ source_code: source, language: "python" });
    expect(r.status).toBe("success");
    expect(r.payload.partial).toBe(true);
    expect(r.payload.diagnostics[0]).toMatchObject({ line: 4 });
    const names = (r.payload.outline.exports as Json[]).map((e) => e.name);
    expect(names).toEqual(["ok", "broken", "After"]);
  });

  it("summarises the function at the cursor", async () => {
    const source =
      "class K:\n    def go(self, n: int = 2) -> str:\n        '''Go n steps.'''\n        return 'x' * n\n";
    const r = await ask({
      source_code: source,
      language: "python",
      cursor: { line: 4, column: 10 },
      scope: "function",
    });
    expect(r.payload.function).toMatchObject({ name: "go", kind: "method", class: "K", returns: "str", line_start: 2 });
    expect(r.payload.summary).toContain("method K.go (lines 2-4)");
  });
});
