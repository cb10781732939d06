/**
 * complete-lite on Python (docs/agents.md, "Python completion"): the syntactic engine on a real
 * workspace (names in scope, self. members with workspace bases, module. public names, broken
 * buffers), and the typed engine with a real pyright child process.
 */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCompleteLite } from "../../../../agents/lib/completion/handler.js";
import { PyrightEngine, pythonInterpreter } from "../../../../agents/lib/completion/python/pyright.js";
import { codeOnly, pythonCompletions } from "../../../../agents/lib/completion/python/syntactic.js";
import {
  memberPairs,
  memberSequences,
  MemberUse,
  memberUse,
} from "../../../../agents/lib/completion/python/member-use.js";
import { completionDocument, pythonDocuments } from "../../../../agents/lib/completion/python/handler.js";
import { readPython } from "../../../../agents/lib/code/languages/python/document.js";
import { AipError } from "../../../../protocol/contract/errors.js";
import { standaloneContext } from "../../../../agents/lib/runtime/context.js";
import { createLogger } from "../../../../protocol/util/log.js";
import type { AipRequest } from "../../../../protocol/contract/schemas.js";
import { workspaceId } from "../../../../protocol/util/paths.js";
import { tempDir } from "../../../helpers.js";

const log = createLogger({ agentName: "test", destination: false });
const ctx = () => standaloneContext({ traceId: "t", budgetMs: 100_000, log });

interface Answer {
  engine: string;
  engine_reason?: string;
  fallbacks?: string[];
  items: { label: string; kind: string }[];
  context: string;
  receiver_kind?: string;
  partial?: boolean;
  diagnostics?: { line: number; message: string }[];
}

const BASE = `class Base:
    kind = "base"

    def __init__(self, name):
        self.name = name
        self._cache = {}

    def describe(self):
        return self.name
`;

const SHAPES = `"""Shapes."""
from .base import Base
from . import util

__all__ = ["Circle", "area"]

LIMIT = 10


class Circle(Base):
    def __init__(self, radius):
        super().__init__("circle")
        self.radius = radius

    @property
    def diameter(self):
        return 2 * self.radius

    def scale(self, factor):
        self.radius *= factor


def area(c):
    return 3.14 * c.radius ** 2


def _private():
    pass
`;

const UTIL = `__all__ = ["clamp", "lerp"]


def clamp(x, lo, hi):
    return max(lo, min(x, hi))


def lerp(a, b, t):
    return a + (b - a) * t


def helper():
    pass
`;

describe("complete-lite on Python, syntactic engine", () => {
  let t: { dir: string; cleanup: () => void };
  let root: string;
  const complete = createCompleteLite();
  const ask = (file: string, source: string, extra: Record<string, unknown> = {}) =>
    complete(
      {
        action: "complete",
        context: { source_code: source, file_path: file, workspace_root: root, ...extra },
        constraints: { max_items: 50 },
      } as unknown as AipRequest,
      ctx(),
    ) as Promise<Answer>;
  const labels = (a: Answer) => a.items.map((i) => i.label);

  beforeAll(() => {
    t = tempDir("aipy-");
    root = realpathSync(t.dir);
    mkdirSync(join(root, "pkg"));
    writeFileSync(join(root, "pkg/__init__.py"), "");
    writeFileSync(join(root, "pkg/base.py"), BASE);
    writeFileSync(join(root, "pkg/shapes.py"), SHAPES);
    writeFileSync(join(root, "pkg/util.py"), UTIL);
  });
  afterAll(() => t.cleanup());

  it("offers self. members of the class and of its workspace base, the class's own first", async () => {
    const src = SHAPES.replace("        self.radius *= factor", "        self.");
    const a = await ask("pkg/shapes.py", src.slice(0, src.indexOf("self.\n") + 5));
    expect(a.engine).toBe("syntactic");
    expect(a.context).toBe("member");
    expect(a.receiver_kind).toBe("self");
    const got = labels(a);
    for (const name of ["radius", "diameter", "scale", "name", "describe", "kind", "_cache"])
      expect(got).toContain(name);
    expect(got.indexOf("radius")).toBeLessThan(got.indexOf("describe"));
    expect(got[0]).toBe("radius");
  });

  it("offers a workspace module's public names after module.", async () => {
    const src = `from pkg import util\n\nutil.`;
    const a = await ask("pkg/main.py", src, { language: "python" });
    expect(a.receiver_kind).toBe("module");
    expect(labels(a).sort()).toEqual(["clamp", "lerp"]);
  });

  it("offers names in scope: parameters, locals, with/except targets, imports, builtins", async () => {
    const src = `import os.path as osp
from collections import OrderedDict


def run(path_in, count):
    total = 0
    with open(path_in) as handle:
        try:
            pass
        except ValueError as problem:
            tot`;
    const a = await ask("pkg/run.py", src);
    expect(a.context).toBe("identifier");
    expect(labels(a)[0]).toBe("total");
    const all = await ask("pkg/run.py", src.replace(/tot$/, "x = ("));
    const names = labels(all);
    for (const n of ["path_in", "count", "total", "handle", "problem", "osp", "OrderedDict", "run"])
      expect(names).toContain(n);
    const b = await ask("pkg/run.py", src.replace(/tot$/, "le"));
    expect(labels(b)).toContain("len");
  });

  it("offers keywords where a statement starts, not after an operator", async () => {
    const start = await ask("pkg/k.py", "def f(x):\n    ret");
    expect(labels(start)).toContain("return");
    const mid = await ask("pkg/k.py", "def f(x):\n    y = ret");
    expect(labels(mid)).not.toContain("return");
  });

  it("answers a broken buffer with success, partial and diagnostics", async () => {
    const src = `def f(items):\n    values = [x for x in items\n    return val`;
    const a = await ask("pkg/broken.py", src);
    expect(a.partial).toBe(true);
    expect(a.diagnostics?.length).toBeGreaterThan(0);
    expect(labels(a)).toContain("values");
  });

  it("offers nothing inside a comment or a string", async () => {
    const a = await ask("pkg/c.py", "total = 1\n# tot");
    expect(a.items).toEqual([]);
    const b = await ask("pkg/c.py", 'total = 1\nx = "tot');
    expect(b.items).toEqual([]);
  });

  it("refuses a language it does not serve by the registry's names, before reading anything", async () => {
    await expect(ask("pkg/x.py", "x = 1\nx", { language: "cobol" })).rejects.toMatchObject({
      code: "AIP_ERR_INVALID_FIELD",
    });
    const a = await ask("pkg/x.py", "total = 1\ntot", { language: "py" });
    expect(labels(a)[0]).toBe("total");
  });

  it("completes keystroke by keystroke in one document_id, from the document's last state", async () => {
    const base = "def run(count):\n    total = 0\n    return total\n";
    const typed = "tot";
    const partial = pythonDocuments.stats().partial;
    let a: Answer | undefined;
    for (let k = 1; k <= typed.length; k++) {
      const src = base.replace("    return", `    ${typed.slice(0, k)}\n    return`);
      const cursor = { line: 3, column: 4 + k };
      a = (await complete(
        {
          action: "complete",
          context: { source_code: src, file_path: "pkg/keys.py", workspace_root: root, cursor },
          constraints: { max_items: 50, document_id: "keys" },
        } as unknown as AipRequest,
        ctx(),
      )) as Answer;
    }
    expect(labels(a!)[0]).toBe("total");
    // Every keystroke after the first re-read the function only.
    expect(pythonDocuments.stats().partial - partial).toBe(typed.length - 1);
  });

  it("falls back when the parser gives up: the document's last state, else a token scan, saying so", async () => {
    const timeout = () => {
      throw new AipError("AIP_ERR_PARSE", "big.py: parsing took longer than 2000 ms");
    };
    const src = "def f(alpha, beta):\n    gamma = alpha + beta\n    return gam";
    const scan = await completionDocument(src, "big.py", "k", { get: timeout, last: () => undefined });
    expect(scan.fallback).toMatch(/took longer than 2000 ms: names from a token scan/);
    expect(scan.doc.source).toBe(src);
    expect(scan.doc.scopes).toEqual([]);
    const before = readPython("def f(alpha, beta):\n    gamma = alpha + beta\n");
    const last = await completionDocument(src, "big.py", "k", { get: timeout, last: () => before });
    expect(last.fallback).toMatch(/scopes from the document's last parse/);
    expect(last.doc.scopes.map((x) => x.name)).toEqual(["f"]);
    expect(last.doc.source).toBe(src);
    // Other failures are not hidden.
    const boom = () => {
      throw new Error("boom");
    };
    await expect(completionDocument(src, "big.py", "k", { get: boom, last: () => undefined })).rejects.toThrow("boom");
  });

  it("offers no keyword after a dot, whatever the checker lists, and keywords where a name may go", async () => {
    await completionDocument("", "k.py", "kw");
    const typed = [
      { label: "else", kind: "keyword", detail: "" },
      { label: "match", kind: "method", detail: "" },
      { label: "real", kind: "property", detail: "" },
    ];
    const src = "import re\nx = re.";
    const member = pythonCompletions(readPython(src), src.length, { limit: 50, typed });
    expect(member.items.map((i) => i.label)).toEqual(expect.arrayContaining(["match", "real", "compile"]));
    expect(member.items.map((i) => i.label)).not.toContain("else");
    const partial = "x = 1\nif x:\n    pass\nel";
    const name = pythonCompletions(readPython(partial), partial.length, { limit: 50 });
    expect(name.items.map((i) => i.label)).toContain("elif");
  });

  it("ranks by the code's use of a name, not by words in its docstrings", () => {
    expect(codeOnly(`x = "a.b" # c.d\ny = '''e.f'''`)).toBe(`x = "   "      \ny = '''   '''`);
  });
});

const SIGNER = `import hashlib
from enum import Enum


class Unit(Enum):
    SECOND = 1
    MINUTE = 60

    def seconds(self):
        return self.value


class BadSignature(Exception):
    def __init__(self, message, payload=None):
        super().__init__(message)
        self.payload = payload


class Signer:
    default_digest = hashlib.sha1

    def __init__(self, key, salt=None):
        self.key = key
        self.salt, self.sep = salt, "."

    def sign(self, value):
        return value + self.sep.encode() + self.get_signature(value)

    def get_signature(self, value):
        key = self.derive_key()
        return key

    def derive_key(self):
        return self.key + self.salt
`;

describe("complete-lite on Python, members of classes and modules outside the buffer", () => {
  let t: { dir: string; cleanup: () => void };
  let root: string;
  const complete = createCompleteLite();
  const ask = (file: string, source: string) =>
    complete(
      {
        action: "complete",
        context: { source_code: source, file_path: file, workspace_root: root, language: "python" },
        constraints: { max_items: 50 },
      } as unknown as AipRequest,
      ctx(),
    ) as Promise<Answer>;
  const labels = (a: Answer) => a.items.map((i) => i.label);
  /** The buffer as an editor has it while typing at `marker`: the saved file cut there. */
  const cut = (text: string, marker: string) => text.slice(0, text.indexOf(marker) + marker.length);

  beforeAll(() => {
    t = tempDir("aipy-members-");
    root = realpathSync(t.dir);
    mkdirSync(join(root, "pkg"));
    writeFileSync(join(root, "pkg/__init__.py"), "from .util import *\n");
    writeFileSync(join(root, "pkg/util.py"), UTIL);
    writeFileSync(join(root, "pkg/signer.py"), SIGNER);
    // Two other files that use util.lerp more than util.clamp.
    for (const n of ["a", "b"])
      writeFileSync(
        join(root, `pkg/use_${n}.py`),
        "from pkg import util\n\nx = util.lerp(0, 1, 0.5) + util.lerp(1, 2, 0.5)\n",
      );
  });
  afterAll(() => t.cleanup());

  it("offers self. members defined below the cursor and assigned as a tuple, with the call unclosed", async () => {
    const a = await ask("pkg/signer.py", cut(SIGNER, "return value + self.sep.encode() + self."));
    expect(a.receiver_kind).toBe("self");
    const got = labels(a);
    for (const name of ["get_signature", "derive_key", "salt", "sep", "key", "default_digest"])
      expect(got.slice(0, 8)).toContain(name);
    // Dunders and the bases' members come after the class's own.
    expect(got.indexOf("__init__")).toBeGreaterThan(got.indexOf("derive_key"));
  });

  it("does not take a comment's closing dot on the line above for the receiver's", async () => {
    const src = cut(SIGNER, "super().__init__(message)\n        self.").replace(
      "super().__init__(message)\n",
      "super().__init__(message)\n        # Kept as sent.\n",
    );
    const a = await ask("pkg/signer.py", src);
    expect(a.receiver_kind).toBe("self");
    expect(labels(a)[0]).toBe("payload");
    const id = await ask("pkg/signer.py", `${src.slice(0, -"self.".length)}pa`);
    expect(id.context).toBe("identifier");
    expect(labels(id)).toContain("payload");
  });

  it("offers the members of standard library bases: Enum's value and name, Exception's args", async () => {
    const e = await ask("pkg/signer.py", cut(SIGNER, "        return self."));
    expect(labels(e)).toEqual(expect.arrayContaining(["value", "name", "seconds", "SECOND"]));
    const x = await ask("pkg/signer.py", cut(SIGNER, "super().__init__(message)\n        self."));
    expect(labels(x)).toEqual(expect.arrayContaining(["payload", "args", "with_traceback"]));
    expect(labels(x).indexOf("payload")).toBeLessThan(labels(x).indexOf("args"));
  });

  it("offers a standard module's names after an import inside a function", async () => {
    const a = await ask("pkg/m.py", "def f(v):\n    import math\n    return math.");
    expect(a.receiver_kind).toBe("module");
    expect(labels(a)).toEqual(expect.arrayContaining(["isnan", "floor"]));
    // A constant the stub declares by its annotation alone.
    expect(labels(await ask("pkg/m.py", "def f(v):\n    import math\n    return math.p"))).toContain("pi");
    // A stub's own imports are not the module's names.
    expect(labels(a)).not.toContain("SupportsFloat");
  });

  it("offers the names a package re-exports with from x import *", async () => {
    const a = await ask("main.py", "import pkg\n\npkg.");
    expect(a.receiver_kind).toBe("module");
    expect(labels(a).sort()).toEqual(["clamp", "lerp"]);
  });

  it("offers builtin members on values typed by a literal, an annotation or a constructor call", async () => {
    const lit = await ask("m.py", 'def f(items):\n    return ", ".');
    expect(labels(lit).slice(0, 5)).toContain("join");
    const ann = await ask("m.py", "def f(name: str, opts: dict[str, int] | None = None):\n    opts.");
    expect(ann.receiver_kind).toBe("instance");
    expect(labels(ann).slice(0, 5)).toEqual(expect.arrayContaining(["get", "items"]));
    const ctor = await ask("m.py", "from collections import defaultdict\ncounts = defaultdict(int)\ncounts.");
    expect(labels(ctor)).toEqual(expect.arrayContaining(["default_factory", "items", "setdefault"]));
    const s = await ask("m.py", "def f(name: str):\n    return name.");
    expect(labels(s).slice(0, 10)).toContain("startswith");
    expect(labels(s)).not.toContain("items");
  });

  it("ranks a module's members by the workspace's other files' use of them", async () => {
    await memberUse.ready(root);
    const a = await ask("pkg/new.py", "from pkg import util\n\nutil.");
    expect(labels(a)).toEqual(["lerp", "clamp"]);
  });

  it("ranks a member named like where its value goes: the assigned name, the keyword, the function", async () => {
    await memberUse.ready(root);
    // Both orders follow the test's name, whichever the workspace's use of them puts first otherwise.
    expect(labels(await ask("test_pkg.py", "import pkg\n\n\ndef test_it():\n    assert pkg.")).sort()).toEqual([
      "clamp",
      "lerp",
    ]);
    const fn = await ask("test_pkg.py", "import pkg\n\n\ndef test_lerp():\n    assert pkg.");
    expect(labels(fn)).toEqual(["lerp", "clamp"]);
    const other = await ask("test_pkg.py", "import pkg\n\n\ndef test_clamp():\n    assert pkg.");
    expect(labels(other)).toEqual(["clamp", "lerp"]);
    const kw = await ask("pkg/test_util.py", "from pkg import util\n\nx = dict(clamp=util.");
    expect(labels(kw)[0]).toBe("clamp");
    const assigned = await ask(
      "pkg/signer.py",
      cut(SIGNER, "key = self.derive_key()").replace(/key = self\.derive_key\(\)$/, "salt = self."),
    );
    expect(labels(assigned)[0]).toBe("salt");
  });

  it("ranks the class's private members as its public ones after self., and not the method being written", async () => {
    const src = `class Stack:
    def __init__(self):
        self._items = []
        self.label = "s"

    def size(self):
        return self.size() + self.`;
    const a = await ask("pkg/stack.py", src);
    expect(a.receiver_kind).toBe("self");
    // _items and label are used alike; size, though the nearest and most used, is the method being written.
    expect(labels(a).slice(0, 2).sort()).toEqual(["_items", "label"]);
    expect(labels(a).indexOf("size")).toBeGreaterThan(1);
    const cls = src.slice(0, src.indexOf("    def size"));
    const other = await ask("pkg/stack.py", `${cls}\ns = Stack()\ns.`);
    expect(other.receiver_kind).toBe("instance");
    expect(labels(other).indexOf("label")).toBeLessThan(labels(other).indexOf("_items"));
  });

  it("counts members per receiver name, leaving out self and the file being edited", async () => {
    const pairs = memberPairs("import os\nos.path.join(a, b)\nself.x = os.sep  # os.getcwd\n");
    expect(Object.fromEntries([...pairs].map(([r, n]) => [r, Object.fromEntries(n)]))).toEqual({
      os: { path: 1, sep: 1 },
      path: { join: 1 },
    });
    const use = await new MemberUse(() => 0).ready(root);
    expect(use.names("util").get("lerp")).toBe(4);
    expect(use.names("util", join(root, "pkg/use_a.py")).get("lerp")).toBe(2);
    // Each of the two files uses util.lerp right after util.lerp once.
    expect(use.follows("util", "lerp").get("lerp")).toBe(2);
    expect(use.follows("util", "lerp", join(root, "pkg/use_a.py")).get("lerp")).toBe(1);
    expect(use.follows("util", "clamp").size).toBe(0);
  });

  it("counts which member follows which on the same receiver name", () => {
    const seq = memberSequences(
      "p = Parser()\np.add('a')\np.add('b')\nq.run()\np.parse()  # p.close()\nself.a\nself.b\n",
    );
    expect(Object.fromEntries([...seq.follows].map(([k, n]) => [k, Object.fromEntries(n)]))).toEqual({
      "p.add": { add: 1, parse: 1 },
    });
    expect(Object.fromEntries(seq.counts.get("p")!)).toEqual({ add: 2, parse: 1 });
  });
});

describe("complete-lite on Python, typed engine (pyright)", () => {
  let t: { dir: string; cleanup: () => void };
  let root: string;
  const pyright = new PyrightEngine();
  const complete = createCompleteLite(undefined, undefined, pyright);
  beforeAll(() => {
    t = tempDir("aipyt-");
    root = realpathSync(t.dir);
    writeFileSync(join(root, "m.py"), "");
  });
  afterAll(() => {
    pyright.close();
    t.cleanup();
  });
  const ask = (source: string, wait: number) =>
    complete(
      {
        action: "complete",
        context: { source_code: source, file_path: "m.py", workspace_root: root },
        constraints: { max_items: 50, typed_wait_ms: wait },
      } as unknown as AipRequest,
      ctx(),
    ) as Promise<Answer>;

  it("answers from the syntactic engine while pyright loads, then from pyright with the members of the inferred type", async () => {
    const src = `import re\n\nword = "abc"\nmatched = re.match("a", word)\nword.`;
    const first = await ask(src, 0);
    expect(first.engine).toBe("syntactic");
    expect(first.engine_reason).toMatch(/no time left|loading|budget/);
    // The checker's first load takes seconds (more on a loaded machine): asked again until it is ready.
    let typed = await ask(src, 50_000);
    for (let i = 0; i < 3 && typed.engine !== "typed"; i++) typed = await ask(src, 50_000);
    expect(typed.engine_reason).toBeUndefined();
    expect(typed.engine).toBe("typed");
    const got = typed.items.map((i) => i.label);
    expect(got).toContain("startswith");
    expect(got).toContain("upper");
    expect(got).not.toContain("group");
    // A workspace without pyproject.toml or pyrightconfig.json: said so.
    expect(typed.fallbacks?.join(" ")).toMatch(/no pyproject.toml or pyrightconfig.json/);
    const h = pyright.health().typed_python as {
      workspaces: { workspace: string; state: string; rss_bytes: number }[];
    };
    expect(h.workspaces[0]).toMatchObject({ workspace: workspaceId(root), state: "ready" });
    expect(JSON.stringify(h)).not.toContain(root);
    expect(h.workspaces[0]!.rss_bytes).toBeGreaterThan(0);
  }, 240_000);

  it("does not wait out the default budget while a new workspace loads", async () => {
    const other = tempDir("aipyt2-");
    try {
      const dir = realpathSync(other.dir);
      writeFileSync(join(dir, "n.py"), "");
      const a = (await complete(
        {
          action: "complete",
          context: { source_code: "word = 'a'\nword.", file_path: "n.py", workspace_root: dir },
          constraints: { max_items: 50 },
        } as unknown as AipRequest,
        ctx(),
      )) as Answer;
      expect(a.engine).toBe("syntactic");
      expect(a.engine_reason).toBe("the checker is still loading this workspace");
    } finally {
      other.cleanup();
    }
  });

  it("names an interpreter that does not exist as the fallback", () => {
    expect(pythonInterpreter({ AIP_PYTHON: "/nonexistent/venv/bin/python" }).note).toMatch(/does not exist/);
    expect(pythonInterpreter({ AIP_PYTHON: "/nonexistent/venv/bin/python" }).path).toBeUndefined();
  });
});
