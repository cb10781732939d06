/**
 * The learned ranking of Python members (docs/agents.md, "Python completion"): the checked-in weights
 * cover every feature the engine computes and are what orders the members, and on a small workspace
 * they put the member the next line uses first.
 */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCompleteLite } from "../../../../agents/lib/completion/handler.js";
import {
  DUNDER_PENALTY,
  emptyFeatures,
  MEMBER_FEATURES,
  memberRecorder,
  memberScore,
  type MemberFeature,
  type MemberGroup,
  type MemberRow,
} from "../../../../agents/lib/completion/python/member-ranker.js";
import { memberUse } from "../../../../agents/lib/completion/python/member-use.js";
import { PYTHON_MEMBER_WEIGHTS } from "../../../../agents/lib/completion/python/member-weights.js";
import { expressionShape, pythonCompletions } from "../../../../agents/lib/completion/python/syntactic.js";
import { readPython } from "../../../../agents/lib/code/languages/python/document.js";
import { loadLanguage } from "../../../../agents/lib/code/languages/registry.js";
import { standaloneContext } from "../../../../agents/lib/runtime/context.js";
import type { AipRequest } from "../../../../protocol/contract/schemas.js";
import { createLogger } from "../../../../protocol/util/log.js";
import { tempDir } from "../../../helpers.js";

const log = createLogger({ agentName: "test", destination: false });
const ctx = () => standaloneContext({ traceId: "t", budgetMs: 100_000, log });

describe("the learned Python member ranking", () => {
  it("loads a weight for every feature, for self. and for other receivers", () => {
    expect([...PYTHON_MEMBER_WEIGHTS.features]).toEqual([...MEMBER_FEATURES]);
    for (const group of ["self", "other"] as const) {
      const w = PYTHON_MEMBER_WEIGHTS[group];
      expect(w).toHaveLength(MEMBER_FEATURES.length);
      expect(w.every(Number.isFinite)).toBe(true);
      // Fitted, not left at zero: what the buffer uses after the same receiver, and near the cursor, counts for.
      expect(w[MEMBER_FEATURES.indexOf("buffer_pair")]).toBeGreaterThan(0);
      expect(w[MEMBER_FEATURES.indexOf("near")]).toBeGreaterThan(0);
    }
    const f = emptyFeatures();
    f.near = 1;
    f.dunder = 1;
    const w = PYTHON_MEMBER_WEIGHTS.other;
    expect(memberScore(f, "other")).toBeCloseTo(
      w[MEMBER_FEATURES.indexOf("near")]! + w[MEMBER_FEATURES.indexOf("dunder")]! - DUNDER_PENALTY,
      9,
    );
    // Weights for features this code does not know are ignored; a missing one counts 0.
    const odd = { features: ["near", "retired"], self: [2, 100], other: [3, 100] };
    expect(memberScore(f, "other", odd)).toBe(3 - DUNDER_PENALTY);
    expect(memberScore(f, "self", odd)).toBe(2 - DUNDER_PENALTY);
  });

  it("orders the members by the weights' scores of their features", async () => {
    await loadLanguage("python");
    const src = `class Box:
    def __init__(self, width, height):
        self.width = width
        self.height = height
        self.__secret = 0

    def area(self):
        return self.width * self.height

    def grow(self, by):
        self.width += by
        size = self.`;
    const recorded: { group: MemberGroup; rows: MemberRow[] }[] = [];
    memberRecorder.record = (group, rows) => recorded.push({ group, rows });
    let labels: string[];
    try {
      labels = pythonCompletions(readPython(src), src.length, { limit: 50 }).items.map((i) => i.label);
    } finally {
      memberRecorder.record = undefined;
    }
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.group).toBe("self");
    const byScore = recorded[0]!.rows
      .map((r) => {
        const f = emptyFeatures();
        MEMBER_FEATURES.forEach((k, i) => (f[k] = r.features[i]!));
        return { label: r.label, score: memberScore(f, "self") };
      })
      .sort((a, b) => b.score - a.score || (a.label < b.label ? -1 : 1))
      .map((r) => r.label);
    expect(labels).toEqual(byScore);
    expect(labels).toEqual(expect.arrayContaining(["width", "height", "area", "grow", "__init__"]));
    // The dunders last.
    expect(labels.at(-1)).toMatch(/^__.*__$/);
  });
});

describe("the Python member features read from the buffer", () => {
  /** The features of each candidate at the end of `src`, by label. */
  const featuresAt = async (src: string): Promise<Map<string, Record<MemberFeature, number>>> => {
    await loadLanguage("python");
    const rows: MemberRow[] = [];
    memberRecorder.record = (_group, r) => rows.push(...r);
    try {
      pythonCompletions(readPython(src), src.length, { limit: 50 });
    } finally {
      memberRecorder.record = undefined;
    }
    return new Map(
      rows.map((r) => {
        const f = emptyFeatures();
        MEMBER_FEATURES.forEach((k, i) => (f[k] = r.features[i]!));
        return [r.label, f];
      }),
    );
  };

  const claims = `class Claims:
    def __init__(self, options):
        self.options = options

    def _validate_required(self, payload):
        pass

    def _validate_iat(self, payload):
        pass

    def _validate_exp(self, payload):
        pass

    def check(self, payload):
        """Runs _validate_required and the checks the options ask for."""
        self.options.update(payload)
        self.options.clear()
        self._validate_required(payload)

        if "iat" in payload:
            self.`;

  it("says which member followed the receiver's last one, and which the function used", async () => {
    const src = `class Seq:
    def __init__(self):
        self.a = 1
        self.b = 2
        self.c = 3

    def one(self):
        self.a
        self.b
        self.a
        self.c

    def two(self):
        self.c
        self.a
        self.`;
    const f = await featuresAt(src);
    // After self.a came self.b twice (__init__, one()) and self.c once; self.a is the last member used.
    expect(f.get("b")!.bigram).toBe(Math.log2(3));
    expect(f.get("c")!.bigram).toBe(1);
    expect(f.get("a")!.bigram).toBe(0);
    expect(f.get("a")!.last_on_receiver).toBe(1);
    // two() used c and a above the cursor, not b.
    expect(f.get("c")!.in_function).toBe(1);
    expect(f.get("a")!.in_function).toBe(1);
    expect(f.get("b")!.in_function).toBe(0);
  });

  it("reads the first call from the names around it: the last member, the lines above, the docstring", async () => {
    const f = await featuresAt(claims);
    const iat = f.get("_validate_iat")!;
    const exp = f.get("_validate_exp")!;
    // Named like the last member used on self (`_validate_required`): both validators alike.
    expect(iat.like_last).toBeGreaterThan(0);
    expect(iat.like_last).toBe(exp.like_last);
    // The line above says "iat": only _validate_iat is named like it (and not for "validate" alone).
    expect(iat.named_context).toBeGreaterThan(exp.named_context);
    // The docstring names _validate_required, not _validate_iat.
    expect(f.get("_validate_required")!.in_doc).toBe(1);
    expect(iat.in_doc).toBe(0);
    // Methods the buffer never calls yet are first calls; options is no method, _validate_required is used.
    expect(iat.unused_method).toBe(1);
    expect(f.get("options")!.unused_method).toBe(0);
    expect(f.get("_validate_required")!.unused_method).toBe(0);
    // The receiver starts the statement: a method is likely called there.
    expect(iat.statement_method).toBe(1);
    expect(f.get("options")!.statement_method).toBe(0);
    expect(iat.condition_method).toBe(0);
  });

  it("says how near the cursor the class defines each member", async () => {
    const src = `class Report:
    def render(self):
        pass

${Array.from({ length: 60 }, (_, i) => `    def filler_${i}(self):\n        pass\n`).join("\n")}
    def _row(self, item):
        pass

    def build(self):
        self.`;
    const f = await featuresAt(src);
    // _row is defined just above build, render some two hundred lines up.
    expect(f.get("_row")!.defined_near).toBeGreaterThan(0.5);
    expect(f.get("render")!.defined_near).toBeGreaterThan(0);
    expect(f.get("render")!.defined_near).toBeLessThan(0.2);
    expect(f.get("filler_59")!.defined_near).toBeGreaterThan(f.get("filler_0")!.defined_near);
    // Other receivers' members have no place in the class being written.
    const other = await featuresAt("import os\n\n\ndef f():\n    os.");
    expect([...other.values()].every((x) => x.defined_near === 0)).toBe(true);
  });

  it("adds the buffer's members on the same receiver to the checker's list, as its misses", async () => {
    await loadLanguage("python");
    const src = `import threading

_local = threading.local()


def push(ctx):
    _local.stack.append(ctx)
    _local.depth = 1


def pop():
    _local.`;
    const dunders = ["__init__", "__dict__", "__class__"].map((label) => ({ label, kind: "method", detail: "" }));
    // A list of object's dunders alone: the checker does not know the receiver; the buffer's names lead.
    const unknown = pythonCompletions(readPython(src), src.length, { limit: 50, typed: dunders }).items;
    expect(unknown.slice(0, 2).map((i) => i.label)).toEqual(expect.arrayContaining(["stack", "depth"]));
    // A real list: the buffer's names are still offered, marked as the checker's misses.
    const rows: MemberRow[] = [];
    memberRecorder.record = (_group, r) => rows.push(...r);
    try {
      pythonCompletions(readPython(src), src.length, {
        limit: 50,
        typed: [...dunders, { label: "get", kind: "method", detail: "" }],
      });
    } finally {
      memberRecorder.record = undefined;
    }
    const missing = MEMBER_FEATURES.indexOf("checker_missing");
    expect(rows.find((r) => r.label === "stack")?.features[missing]).toBe(1);
    expect(rows.find((r) => r.label === "get")?.features[missing]).toBe(0);
  });

  it("offers an untyped receiver the members of the class it looks like", async () => {
    const classes = `class TokenParser:
    def __init__(self, text):
        self.text = text
        self.pos = 0

    def advance(self):
        pass

    def peek(self):
        pass


class Writer:
    def emit(self, s):
        pass

    def close(self):
        pass


`;
    // Named like the receiver.
    const named = await featuresAt(`${classes}def run(token_parser):\n    token_parser.`);
    expect(named.get("advance")!.lookalike).toBe(1);
    expect(named.get("pos")!.lookalike).toBe(1);
    expect(named.has("emit")).toBe(false);
    // Using members only one class has.
    const used = await featuresAt(`${classes}def run(out):\n    out.emit("a")\n    out.emit("b")\n    out.`);
    expect(used.get("close")!.lookalike).toBe(0.5);
    expect(used.has("advance")).toBe(false);
    const two = await featuresAt(`${classes}def run(out):\n    out.emit("a")\n    out.close()\n    out.`);
    expect(two.get("close")!.lookalike).toBe(1);
    // A receiver like no class: nothing added.
    const none = await featuresAt(`${classes}def run(thing):\n    thing.`);
    expect([...none.values()].every((x) => x.lookalike === 0)).toBe(true);
  });

  it("reads where the receiver's expression stands in its statement", () => {
    const shape = (code: string) => expressionShape(code, code.length);
    expect(shape("    self.")).toBe("statement");
    expect(shape("    x = self.")).toBe("assign");
    expect(shape("    total += self.")).toBe("assign");
    expect(shape("    return self.")).toBe("return");
    expect(shape("    for item in self.")).toBe("iterate");
    expect(shape("    run(a, self.")).toBe("argument");
    expect(shape("    run(key=self.")).toBe("argument");
    expect(shape("    run(\n        self.")).toBe("argument");
    expect(shape("def f(a: t.")).toBe("annotation");
    expect(shape("def f(a) -> t.Optional[t.")).toBe("annotation");
    expect(shape("    name: t.")).toBe("annotation");
    // A block's colon is no annotation; a comparison is no assignment.
    expect(shape("    else: self.")).toBe("other");
    expect(shape("    x == self.")).toBe("other");
  });

  it("weighs a type's name by whether an annotation or a value is written", async () => {
    const typing = `import typing as t


def cast_all(items: t.List[int]) -> t.Optional[int]:
    return t.cast(int, items)


def first(values: t.`;
    const ann = await featuresAt(typing);
    expect(ann.get("Optional")!.annotation_type).toBe(1);
    expect(ann.get("Optional")!.value_type).toBe(0);
    expect(ann.get("cast")!.annotation_type).toBe(0);
    const val = await featuresAt(`${typing}List[int]):\n    n = t.`);
    expect(val.get("Optional")!.value_type).toBe(1);
    expect(val.get("Optional")!.annotation_type).toBe(0);
    expect(val.get("cast")!.value_type).toBe(0);
    expect(val.get("cast")!.method).toBe(1);
    expect(val.get("cast")!.assign_method).toBe(1);
    expect(ann.get("cast")!.assign_method).toBe(0);
    // Used on the same receiver earlier on the line.
    const line = await featuresAt(`${typing}List[int]) -> t.Optional[t.`);
    expect(line.get("Optional")!.same_line).toBe(1);
    expect(line.get("List")!.same_line).toBe(1);
    expect(line.get("cast")!.same_line).toBe(0);
  });

  it("marks the parameters not yet stored and the string method a literal calls for", async () => {
    const init = await featuresAt(`class Job:
    retries: int
    timeout: float
    name: str

    def __init__(self, name, retries=3, *, timeout: float = 1.0):
        self.name = name
        self.`);
    expect(init.get("retries")!.parameter).toBe(1);
    expect(init.get("timeout")!.parameter).toBe(1);
    // Already stored above the cursor.
    expect(init.get("name")!.parameter).toBe(0);
    const fmt = await featuresAt('def show(x):\n    return "{} items".');
    expect(fmt.get("format")!.literal_fit).toBe(1);
    expect(fmt.get("join")!.literal_fit).toBe(0);
    const sep = await featuresAt('def show(xs):\n    return ", ".');
    expect(sep.get("join")!.literal_fit).toBe(1);
    expect(sep.get("format")!.literal_fit).toBe(0);
  });

  it("tells a condition's receiver from a statement's", async () => {
    const f = await featuresAt(claims.replace(/self\.$/, "if payload and self."));
    expect(f.get("check")!.condition_method).toBe(1);
    expect(f.get("check")!.statement_method).toBe(0);
    expect(f.get("options")!.condition_method).toBe(0);
  });
});

describe("the learned Python member ranking on a workspace", () => {
  let t: { dir: string; cleanup: () => void };
  let root: string;
  const complete = createCompleteLite();
  const ask = async (file: string, source: string) =>
    (
      (await complete(
        {
          action: "complete",
          context: { source_code: source, file_path: file, workspace_root: root, language: "python" },
          constraints: { max_items: 50 },
        } as unknown as AipRequest,
        ctx(),
      )) as { items: { label: string }[]; receiver_kind?: string }
    ).items.map((i) => i.label);

  beforeAll(async () => {
    t = tempDir("aipy-ranker-");
    root = realpathSync(t.dir);
    mkdirSync(join(root, "geo"));
    writeFileSync(join(root, "geo/__init__.py"), "");
    writeFileSync(
      join(root, "geo/shapes.py"),
      [
        "def area(s):\n    return 0\n",
        "def perimeter(s):\n    return 0\n",
        "def bounding_box(s):\n    return 0\n",
        "def centroid(s):\n    return 0\n",
        "def rotate(s, a):\n    return s\n",
        "def translate(s, d):\n    return s\n",
      ].join("\n"),
    );
    writeFileSync(
      join(root, "geo/measures.py"),
      ["def area(s):\n    return 0\n", "def bounding_box(s):\n    return 0\n", "def centroid(s):\n    return 0\n"].join(
        "\n",
      ),
    );
    // The workspace's other files move shapes about more than they measure them.
    for (const n of ["a", "b", "c"])
      writeFileSync(
        join(root, `geo/use_${n}.py`),
        "from geo import shapes\n\n\ndef move(s):\n    return shapes.translate(shapes.rotate(s, 1), 2)\n",
      );
    await memberUse.ready(root);
  });
  afterAll(() => t.cleanup());

  it("puts first the member the workspace's other files use after a receiver of that name", async () => {
    const got = await ask("geo/new.py", "from geo import shapes\n\n\ndef place(s):\n    return shapes.");
    expect(got.slice(0, 2).sort()).toEqual(["rotate", "translate"]);
  });

  it("puts first the member named like the variable its value goes to", async () => {
    const src = "from geo import measures\n\n\ndef report(s):\n    box = measures.";
    expect(await ask("geo/new.py", src)).toEqual(["bounding_box", "area", "centroid"]);
    expect((await ask("geo/new.py", src.replace("box", "middle")))[0]).not.toBe("bounding_box");
  });

  it("puts first, after self., the attribute the method uses with its sibling", async () => {
    const src = `class Rect:
    def __init__(self, width, height, label):
        self.width = width
        self.height = height
        self.label = label

    def describe(self):
        return self.label

    def area(self):
        return self.width * self.`;
    const got = await ask("geo/rect.py", src);
    expect(got.slice(0, 2)).toContain("height");
    expect(got.indexOf("area")).toBeGreaterThan(got.indexOf("describe"));
  });
});
