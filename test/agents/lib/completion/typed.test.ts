/** complete-lite's typed engine through the real executable (dist/), on temp workspaces. */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRequest, invokeHttp } from "../../../../protocol/transport/client.js";
import { serve, type Served } from "../../../../tools/conformance/process.js";
import { tempDir, until } from "../../../helpers.js";
import { COMPLETE_LITE, cursorOf, type Json } from "../../code-helpers.js";
import { SERVICE_LIMITS, WorkspaceService } from "../../../../agents/lib/code/service.js";
import { typedCompletions } from "../../../../agents/lib/completion/typed.js";
import { workspaceId } from "../../../../agents/lib/completion/engine.js";
import { memberFacts } from "../../../../agents/lib/completion/member-rank.js";
import { lineageOf } from "../../../../agents/lib/code/stale.js";

const SHAPES = `export interface Named {
  name: string;
  rename(to: string): void;
}
export class Base implements Named {
  name = "";
  protected hidden = 1;
  rename(to: string): void {
    this.name = to;
  }
}
export class Circle extends Base {
  radius = 1;
  area(): number {
    return Math.PI * this.radius ** 2;
  }
  get diameter(): number {
    return this.radius * 2;
  }
}
export class Box<T> {
  constructor(readonly value: T) {}
  map<U>(f: (v: T) => U): Box<U> {
    return new Box(f(this.value));
  }
}
export enum Color {
  Red,
  Green,
  Blue,
}
export namespace Geometry {
  export const origin = { x: 0, y: 0 };
  export function distance(): number {
    return 0;
  }
}
export type Shape = { kind: "circle"; radius: number } | { kind: "square"; side: number };
`;

const EXTRA = `export function helperFn(): number {
  return 1;
}
`;

interface Ws {
  dir: string;
  cleanup: () => void;
}

function workspace(files: Record<string, string>): Ws {
  const t = tempDir("aipty-");
  const dir = realpathSync(t.dir);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return { dir, cleanup: t.cleanup };
}

describe("complete-lite, typed engine", () => {
  let t: { dir: string; cleanup: () => void };
  let agent: Served;
  let ws: Ws;
  beforeAll(async () => {
    t = tempDir("aipc-");
    agent = await serve(COMPLETE_LITE, join(t.dir, "a.sock"));
    ws = workspace({
      "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", lib: ["ES2022", "DOM"] } }),
      "node_modules/.keep": "",
      "src/shapes.ts": SHAPES,
      "src/extra.ts": EXTRA,
    });
  }, 30_000);
  afterAll(async () => {
    await agent.stop();
    expect(agent.stderr()).toBe("");
    ws.cleanup();
    t.cleanup();
  });

  /** Complete `body` (written to src/use.ts) at the end of `needle` (plus `delta`), waiting for the checker. */
  async function complete(body: string, needle: string, constraints: Json = {}, root = ws.dir): Promise<Json> {
    const source = `import { Base, Box, Circle, Color, Geometry, type Shape } from "./shapes";\n${body}`;
    const r = await invokeHttp(
      agent.socketPath,
      {
        action: "complete",
        context: {
          workspace_root: root,
          file_path: "src/use.ts",
          source_code: source,
          cursor: cursorOf(source, needle, needle.length),
        },
        constraints: { timeout_ms: 60_000, typed_wait_ms: 60_000, max_items: 20, ...constraints },
      },
      70_000,
    );
    const json = r.json as Json;
    expect(json.status, JSON.stringify(json.error)).toBe("success");
    return json.payload as Json;
  }
  const labels = (p: Json): string[] => (p.items as Json[]).map((i) => i.label as string);

  it("offers inherited members of a class instance, not protected ones, with methods as calls", async () => {
    const p = await complete("const c = new Circle();\nc.\n", "c.");
    expect(p.engine, p.engine_reason).toBe("typed");
    expect(p.context).toBe("member");
    expect(labels(p).sort()).toEqual(["area", "diameter", "name", "radius", "rename"]);
    expect(p.items.find((i: Json) => i.label === "area")).toMatchObject({ kind: "method", insert_text: "area($0)" });
    expect(p.replace).toEqual({ start: { line: 3, column: 2 }, end: { line: 3, column: 2 } });
  });

  it("ranks members the buffer already uses on that receiver first, and never the member being declared", async () => {
    const p = await complete(
      "class Ring extends Circle {\n  get inner(): number {\n    return this.radius + this.radius + this.\n  }\n}\n",
      "this.radius + this.radius + this.",
    );
    expect(labels(p)[0]).toBe("radius");
    expect(labels(p)).not.toContain("inner");
    expect(labels(p)).toContain("area");
  });

  it("follows generics, unions, optional chaining, enums and namespaces", async () => {
    const generic = await complete("new Box(1).map((n) => String(n)).value.toUpp\n", "value.toUpp");
    expect(labels(generic)).toEqual(["toUpperCase", "toLocaleUpperCase"]);
    const union = await complete("declare const s: Shape;\ns.\n", "s.");
    expect(labels(union)).toEqual(["kind"]);
    const optional = await complete("declare const maybe: Circle | undefined;\nmaybe?.ar\n", "maybe?.ar");
    expect(labels(optional)).toEqual(["area"]);
    const en = await complete("Color.\n", "Color.");
    expect(labels(en)).toEqual(["Blue", "Green", "Red"]);
    expect(en.items[0]).toMatchObject({ kind: "enumMember" });
    const ns = await complete("Geometry.\n", "Geometry.");
    expect(labels(ns).sort()).toEqual(["distance", "origin"]);
  });

  it("knows library types: string, Map, Response", async () => {
    const str = await complete('"abc".startsW\n', "startsW");
    expect(labels(str)).toEqual(["startsWith"]);
    const map = await complete("const m = new Map<string, number>();\nm.\n", "m.");
    expect(labels(map)).toEqual(expect.arrayContaining(["get", "set", "has", "delete", "size", "forEach"]));
    const res = await complete('fetch("x").then((r) => r.js);\n', "r.js");
    expect(labels(res)).toEqual(["json"]);
  });

  it("respects type and value positions, and marks auto-import candidates", async () => {
    const typePos = await complete("let v: Sha\n", "let v: Sha");
    expect(labels(typePos)).toContain("Shape");
    const valuePos = await complete("const w = Sha\n", "const w = Sha");
    expect(labels(valuePos)).not.toContain("Shape");
    // The first program held use.ts and what it imports; extra.ts comes with the whole workspace's.
    const scope = async (): Promise<unknown> => {
      const health = JSON.parse((await httpRequest(agent.socketPath, { path: "/healthz" })).body) as Json;
      return (health.typed.workspaces as Json[]).find((w) => w.workspace === workspaceId(ws.dir))?.scope;
    };
    await until(async () => (await scope()) === "workspace", 60_000, "the whole workspace's program");
    const auto = await complete("const h = helperF\n", "helperF");
    expect(auto.items[0]).toMatchObject({ label: "helperFn", auto_import: true, source: "./extra" });
  });

  it("never offers plain identifiers after a dot the syntactic engine cannot follow", async () => {
    const p = await complete("function make() { return new Circle(); }\nconst local = 1;\nmake().\n", "make().", {
      typed_wait_ms: 0,
    });
    expect(p.engine).toBe("syntactic");
    expect(p.context).toBe("member");
    expect(labels(p)).not.toContain("local");
    const typedAnswer = await complete(
      "function make() { return new Circle(); }\nconst local = 1;\nmake().\n",
      "make().",
    );
    expect(typedAnswer.engine, typedAnswer.engine_reason).toBe("typed");
    expect(labels(typedAnswer)).toContain("area");
    expect(labels(typedAnswer)).not.toContain("local");
  });

  it("answers from the syntactic engine when the checker has no time, and says so", async () => {
    const p = await complete("const alpha = 1;\nconst b = alp\n", "alp", { typed_wait_ms: 0 });
    expect(p.engine).toBe("syntactic");
    expect(p.engine_reason).toBe("no time left for the checker");
    expect(labels(p)[0]).toBe("alpha");
  });

  it("answers a file outside the first program's closure once the whole workspace's program holds its imports", async () => {
    const two = workspace({
      "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", lib: ["ES2022"] } }),
      "src/left.ts": "export class Left {\n  leftOnly(): number {\n    return 1;\n  }\n}\n",
      "src/right.ts": "export class Right {\n  rightOnly(): string {\n    return '';\n  }\n}\n",
      // The rest of the workspace: the second request comes while it is read.
      ...Object.fromEntries(
        Array.from({ length: 300 }, (_, i) => [`src/more/m${i}.ts`, `export const m${i} = ${i};\n`]),
      ),
    });
    try {
      const ask = async (file: string, source: string, needle: string): Promise<Json> => {
        const r = await invokeHttp(
          agent.socketPath,
          {
            action: "complete",
            context: {
              workspace_root: two.dir,
              file_path: file,
              source_code: source,
              cursor: cursorOf(source, needle, needle.length),
            },
            constraints: { timeout_ms: 60_000, typed_wait_ms: 60_000, max_items: 20 },
          },
          70_000,
        );
        return (r.json as Json).payload as Json;
      };
      const first = await ask("src/a.ts", 'import { Left } from "./left";\nnew Left().\n', "Left().");
      expect(first.engine, first.engine_reason).toBe("typed");
      expect(labels(first)).toEqual(["leftOnly"]);
      // right.ts is not in a.ts's closure: the answer for b.ts comes from a program that holds it.
      const second = await ask("src/b.ts", 'import { Right } from "./right";\nnew Right().\n', "Right().");
      expect(second.engine, second.engine_reason).toBe("typed");
      expect(labels(second)).toEqual(["rightOnly"]);
    } finally {
      two.cleanup();
    }
  });

  it("still completes without a tsconfig.json or node_modules, or with a broken tsconfig.json, and says what it fell back to", async () => {
    const bare = workspace({ "src/shapes.ts": SHAPES });
    const broken = workspace({ "src/shapes.ts": SHAPES, "tsconfig.json": '{ "compilerOptions": ' });
    try {
      const a = await complete("Color.\n", "Color.", {}, bare.dir);
      expect(a.engine, a.engine_reason).toBe("typed");
      expect(labels(a)).toEqual(["Blue", "Green", "Red"]);
      expect(a.fallbacks[0]).toMatch(/^no tsconfig\.json: default options/);
      expect(a.fallbacks[1]).toMatch(/^no node_modules/);
      const b = await complete("new Circle().ar\n", "().ar", {}, broken.dir);
      expect(b.engine).toBe("typed");
      expect(labels(b)).toEqual(["area"]);
      expect(b.fallbacks[0]).toMatch(/^tsconfig\.json does not parse/);
      // /healthz shows the worker's last stats and asks it for new ones: poll until both workspaces are in.
      const roots = (h: Json): string[] => h.typed.workspaces.map((w: Json) => w.workspace as string);
      let health: Json = {};
      await until(
        async () => {
          health = JSON.parse((await httpRequest(agent.socketPath, { path: "/healthz" })).body) as Json;
          return roots(health).includes(workspaceId(bare.dir)) && roots(health).includes(workspaceId(broken.dir));
        },
        5_000,
        "both workspaces on /healthz",
      ).catch(() => undefined);
      expect(health.typed.limits).toMatchObject({ max_workspaces: 3 });
      expect(roots(health)).toEqual(expect.arrayContaining([workspaceId(bare.dir), workspaceId(broken.dir)]));
      // No client's path on /healthz.
      expect(JSON.stringify(health)).not.toContain(bare.dir);
    } finally {
      bare.cleanup();
      broken.cleanup();
    }
  });
});

/**
 * A workspace (ES2022 lib, no @types) with its language service loaded: `src/a.ts` holds `source`,
 * `others` more files under `src/`.
 */
async function withService(
  source: string,
  run: (svc: WorkspaceService, path: string) => void | Promise<void>,
  others: Record<string, string> = {},
): Promise<void> {
  const ws = workspace({
    "tsconfig.json": JSON.stringify({
      compilerOptions: { strict: true, target: "ES2022", lib: ["ES2022"], types: [] },
    }),
    "src/a.ts": source,
    ...Object.fromEntries(Object.entries(others).map(([name, text]) => [`src/${name}`, text])),
  });
  const svc = new WorkspaceService(ws.dir);
  try {
    await svc.loaded;
    await run(svc, join(ws.dir, "src/a.ts"));
  } finally {
    svc.dispose();
    ws.cleanup();
  }
}

describe("typed engine in process: when a keystroke reuses the last collection", () => {
  it("a word extended, or a blank, operator or newline after it, reuses the names in scope; a brace or a dot collects again", async () => {
    await withService("export const limit = 1;\n", (svc, path) => {
      const base = "export const limit = 1;\nexport function f(lengthy: number) {\n  return ";
      const tail = "\n}\n";
      const at = (typed: string) => {
        const text = base + typed + tail;
        return typedCompletions(svc, path, text, base.length + typed.length, 10);
      };
      const first = at("le");
      expect(first.reused).toBe(false);
      expect(first.items[0]!.label).toBe("lengthy");
      expect(at("len").reused).toBe(true);
      const blank = at("lengthy + ");
      expect(blank.reused).toBe(true);
      expect(blank.items.map((i) => i.label)).toEqual(expect.arrayContaining(["lengthy", "limit"]));
      expect(at("lengthy + l").reused).toBe(false); // a new word: collected again
      const newline = at("lengthy + l\n  ");
      expect(newline.reused).toBe(true); // the same block: the same names
      expect(newline.items.map((i) => i.label)).toEqual(expect.arrayContaining(["lengthy", "limit"]));
      expect(at("lengthy + l {").reused).toBe(false);
      expect(at("le").reused).toBe(false);
      const member = at("lengthy.");
      expect(member.reused).toBe(false);
      expect(member.context).toBe("member");
      expect(member.items.map((i) => i.label)).toContain("toFixed");
      // After the member list, a call's `(` goes back to the names collected before it, without the checker.
      const args = at("lengthy.toFixed(");
      expect(args.reused).toBe(true);
      expect(args.context).toBe("identifier");
      expect(args.items.map((i) => i.label)).toEqual(expect.arrayContaining(["lengthy", "limit"]));
      // A new declaration's name: nothing in scope completes it.
      expect(at("lengthy;\n  const l").items).toEqual([]);
      expect(at("lengthy;\n  function le").items).toEqual([]);
    });
  }, 60_000);

  it("a new word in the same statement answers from the names collected at the last word when its auto-import candidates are known, as the checker would", async () => {
    const other = "export function other(): void {}\n";
    await withService(
      "export const limit = 1;\n",
      (svc, path) => {
        const base = "export const limit = 1;\nexport function f(lengthy: number): number {\n  const total = ";
        const tail = ";\n  return total;\n}\n";
        const at = (typed: string) => typedCompletions(svc, path, base + typed + tail, base.length + typed.length, 50);
        // The checker's own answer: asked after another file's keystroke, so nothing of this one is reused.
        const fresh = (typed: string) => {
          const o = path.replace(/a\.ts$/, "o.ts");
          typedCompletions(svc, o, other, other.length, 5);
          const r = at(typed);
          expect(r.reused).toBe(false);
          return r.items;
        };
        const labels = (items: { label: string }[]) => items.map((i) => i.label);
        const first = at("le"); // collected, with TypeScript's search for "le" (auto-import candidates)
        expect(first.reused).toBe(false);
        const again = at("lengthy * le");
        expect(again.reused).toBe(true);
        expect(labels(again.items)).toContain("lengthy");
        expect(labels(again.items)).not.toContain("total"); // the variable being initialised
        expect(again.items).toEqual(fresh("lengthy * le"));
        // A call's argument (a `,` inside the bracket it opened) is the same scope.
        at("le");
        const arg = at("Math.max(lengthy, le");
        expect(arg.reused).toBe(true);
        expect(arg.items).toEqual(fresh("Math.max(lengthy, le"));
        // Past the statement's end the declaration collected in (left out of its list) is in scope: collected again.
        at("le");
        const next = at("lengthy;\n  le");
        expect(next.reused).toBe(false);
        expect(labels(at("lengthy;\n  to").items)).toContain("total");
        // A type position (`as`), or a word whose auto-import candidates are not known yet: collected again.
        at("le");
        expect(at("lengthy as le").reused).toBe(false);
        at("le");
        expect(at("lengthy * li").reused).toBe(false);
      },
      { "o.ts": other },
    );
  }, 60_000);

  it("a type position's names are not reused after `=` or `;`: the value position collects again", async () => {
    await withService("export interface Shape { n: number }\nexport const shapeCount = 1;\n", (svc, path) => {
      const base =
        "export interface Shape { n: number }\nexport const shapeCount = 1;\nexport function f(shaped: number) {\n  let s: ";
      const tail = "\n}\n";
      const at = (typed: string) => typedCompletions(svc, path, base + typed + tail, base.length + typed.length, 50);
      const type = at("Sh");
      expect(type.items.map((i) => i.label)).toContain("Shape");
      expect(type.items.map((i) => i.label)).not.toContain("shaped");
      const value = at("Shape = ");
      expect(value.reused).toBe(false);
      expect(value.items.map((i) => i.label)).toEqual(expect.arrayContaining(["shaped", "shapeCount"]));
    });
  }, 60_000);
});

describe("typed engine in process: answers from the last program's checker (stale.ts)", () => {
  const labels = (r: { items: { label: string }[] }) => r.items.map((i) => i.label);

  it("members after `.` come from the last program, without a rebuild, even where another file imports the file", async () => {
    const base =
      'import { Circle } from "./shapes.js";\nexport function f(n: number): number {\n  const c = new Circle();\n  ';
    const tail = "\n  return n;\n}\n";
    await withService(
      base + tail,
      (svc, path) => {
        const at = (typed: string) => typedCompletions(svc, path, base + typed + tail, base.length + typed.length, 50);
        at("c"); // the program is built for this text
        const before = svc.stats();
        const member = at("c.");
        expect(member.reused).toBe(false);
        expect(member.stale).toBe(true);
        expect(member.context).toBe("member");
        expect(labels(member)).toEqual(expect.arrayContaining(["radius", "area", "diameter", "name", "rename"]));
        expect(labels(member)).not.toContain("hidden"); // protected
        expect(labels(member)).not.toContain("n"); // never identifiers after a dot
        expect(svc.stats().rebuilds).toBe(before.rebuilds);
        expect(svc.stats().stale_answers).toBe(before.stale_answers + 1);
        // A word's first character: the names in scope, and auto-import candidates, from the same program.
        const word = at("c.area();\n  B");
        expect(word.stale).toBe(true);
        expect(word.items.find((i) => i.label === "Box")).toMatchObject({ auto_import: true, source: "./shapes.js" });
        expect(labels(at("c.area();\n  n"))).toContain("n");
        expect(svc.stats().rebuilds).toBe(before.rebuilds);
      },
      { "shapes.ts": SHAPES, "b.ts": 'import { f } from "./a.js";\nexport const g = f(1);\n' },
    );
  }, 60_000);

  it("a receiver whose declaration changed in the file is typed from the new text", async () => {
    const base = 'import { Box, Circle } from "./shapes.js";\nexport function f(): void {\n  const x = new ';
    const tail = "\n}\n";
    await withService(
      base + "Circle();\n  x" + tail,
      (svc, path) => {
        const at = (typed: string) => typedCompletions(svc, path, base + typed + tail, base.length + typed.length, 50);
        expect(labels(at("Circle();\n  x."))).toContain("radius");
        const boxed = at("Box(1);\n  x.");
        expect(boxed.stale).toBe(true);
        expect(labels(boxed)).toEqual(expect.arrayContaining(["map", "value"]));
        expect(labels(boxed)).not.toContain("radius");
      },
      { "shapes.ts": SHAPES },
    );
  }, 60_000);

  it("is not asked when the receiver's type comes through a file that imports this one, or when the imports change", async () => {
    // b.ts types `made` from a.ts's `make`, whose return type is inferred from its body: an edit of that
    // body changes the receiver's type, which only a new program sees.
    const head = 'import { made } from "./b.js";\nexport function make() {\n  return { ';
    const mid = ": 1 };\n}\nexport function use(): void {\n  ";
    const tail = "\n}\n";
    await withService(
      head + "first" + mid + "made" + tail,
      (svc, path) => {
        const at = (field: string, typed: string) => {
          const text = head + field + mid + typed + tail;
          return typedCompletions(svc, path, text, text.length - tail.length, 50);
        };
        const first = at("first", "made.");
        expect(labels(first)).toContain("first");
        const rebuilds = svc.stats().rebuilds;
        const second = at("second", "made.");
        expect(second.stale).toBe(false);
        expect(svc.stats().rebuilds).toBe(rebuilds + 1);
        expect(labels(second)).toContain("second");
        expect(labels(second)).not.toContain("first");
        // A new import: the old program never resolved it.
        const text = 'import { Circle } from "./shapes.js";\n' + head + "second" + mid + "new Circle().";
        const circle = typedCompletions(svc, path, text + tail, text.length, 50);
        expect(circle.stale).toBe(false);
        expect(labels(circle)).toContain("radius");
      },
      { "b.ts": 'import { make } from "./a.js";\nexport const made = make();\n', "shapes.ts": SHAPES },
    );
  }, 60_000);

  it("an edit inside a function's body binds that function alone, and the rest of the file sees its new type", async () => {
    const text = (extra: string) =>
      `export function make() {\n  return { alpha: 1${extra} };\n}\nexport function use(): number {\n  const v = make();\n  return v.alpha;\n}\n`;
    await withService(text(""), (svc, path) => {
      /** The members of `v` in use (not edited), as the view's checker types it. */
      const members = (view: ReturnType<WorkspaceService["stale"]>) => {
        if (!("program" in view)) throw new Error(view.reason);
        const use = view.file.statements[1] as ts.FunctionDeclaration;
        const v = (use.body!.statements[0] as ts.VariableStatement).declarationList.declarations[0]!.name;
        return view.program
          .getTypeChecker()
          .getTypeAtLocation(v)
          .getProperties()
          .map((p) => p.name);
      };
      const first = svc.stale(path, text(", b: 1"));
      expect(members(first)).toEqual(["alpha", "b"]);
      // The next keystroke in make's body: the new shadow keeps the file's symbols (stale.ts bindEdited), and
      // the checker sees them as new: make's inferred type changed.
      const second = svc.stale(path, text(", be: 1"));
      expect((second as { file: { locals?: unknown } }).file.locals).toBe(
        (first as { file: { locals?: unknown } }).file.locals,
      );
      expect(members(second)).toEqual(["alpha", "be"]);
      svc.tidy();
      expect(members(svc.stale(path, text(", be: 1, gamma: 2")))).toEqual(["alpha", "be", "gamma"]);
    });
  }, 60_000);

  it("member facts keep what another statement's accesses resolve to while the edits stay in a body with a declared return type", async () => {
    const text = (made: string, typed: string) =>
      `export function make() {\n  return ${made};\n}\n` +
      `export function use(): number {\n  const v = make();\n  return v.alpha + v.alpha;\n}\n` +
      `export function typing(): number {\n  const w = make();\n  w.${typed}\n  return 0;\n}\n`;
    await withService(text("{ alpha: 1 }", ""), (svc, path) => {
      /** The view of `source` and the typed uses of each member at the cursor after `w.`. */
      const ask = (source: string, typed: string) => {
        const view = svc.stale(path, source);
        if (!("program" in view)) throw new Error(view.reason);
        const offset = source.indexOf("  w.") + 4 + typed.length;
        const typedUses = Object.fromEntries(memberFacts(view.program, view.file, offset)!.typed);
        svc.tidy();
        return { lineage: lineageOf(view.file), typedUses };
      };
      const rebuilds = svc.stats().rebuilds;
      const first = ask(text("{ alpha: 1 }", "a"), "a");
      expect(first.lineage).toBeDefined();
      expect(first.typedUses).toEqual({ alpha: 2 });
      // An edit in typing's body (declared `: number`): the same lineage, `use` resolved as before.
      const second = ask(text("{ alpha: 1 }", "al"), "al");
      expect(second.lineage).toBe(first.lineage);
      expect(second.typedUses).toEqual({ alpha: 2 });
      // An edit in make's body (its type is inferred from it): `alpha` is now the type literal's, and
      // `use`'s accesses must be resolved again to count.
      const third = ask(text("{ alpha: 1 } as { alpha: number }", "al"), "al");
      expect(third.lineage).not.toBe(first.lineage);
      expect(third.typedUses).toEqual({ alpha: 2 });
      expect(svc.stats().rebuilds).toBe(rebuilds);
    });
  }, 60_000);

  it("answers from one program at most SERVICE_LIMITS.maxStaleAnswers times, then builds a new one", async () => {
    const text = (i: number) => `export function f(n: number): number {\n  const v${i} = n;\n  return n;\n}\n`;
    await withService(text(0), (svc, path) => {
      for (let i = 1; i <= SERVICE_LIMITS.maxStaleAnswers; i++) {
        svc.update(path, text(i));
        expect(svc.stale(path, text(i))).toHaveProperty("program");
        svc.tidy();
      }
      svc.update(path, text(999));
      expect(svc.stale(path, text(999))).toEqual({ reason: expect.stringContaining("answers from this program") });
      // The program's own text needs no new program: its file answers.
      expect(svc.stale(path, text(0))).toHaveProperty("file.text", text(0));
      const { rebuilds } = svc.stats();
      svc.program();
      expect(svc.stats().rebuilds).toBe(rebuilds + 1);
      svc.update(path, text(1000));
      expect(svc.stale(path, text(1000))).toHaveProperty("program");
    });
  }, 60_000);
});

describe("typed engine in process: auto-import candidates searched once per word and program", () => {
  it("another word start with the same letters adds the candidates found then, less those a name in scope now hides", async () => {
    const base =
      'import { Circle } from "./shapes.js";\nexport function f(n: number): number {\n  const c = new Circle();\n  ';
    const tail = "\n  return n;\n}\n";
    await withService(
      base + tail,
      (svc, path) => {
        const at = (typed: string) => typedCompletions(svc, path, base + typed + tail, base.length + typed.length, 50);
        const boxes = (typed: string) => at(typed).items.filter((i) => i.label === "Box");
        at("c;\n  "); // the program is built for this text
        const { rebuilds } = svc.stats();
        expect(boxes("c;\n  B")).toEqual([expect.objectContaining({ auto_import: true, source: "./shapes.js" })]);
        expect(boxes("c.area();\n  B")).toEqual([
          expect.objectContaining({ auto_import: true, source: "./shapes.js" }),
        ]);
        // A local `Box` declared since hides the import, as TypeScript's own search would.
        const local = boxes("const Box = 1;\n  B");
        expect(local).toHaveLength(1);
        expect(local[0]).not.toHaveProperty("auto_import");
        // Searched with the local in scope, then asked where it is gone: searched again, the import is back.
        expect(boxes("const Box = 1;\n  c;\n  Bo")).toEqual([expect.not.objectContaining({ auto_import: true })]);
        expect(boxes("Bo")).toEqual([expect.objectContaining({ auto_import: true, source: "./shapes.js" })]);
        // A type alias is a candidate in a type position only, whichever position was searched first.
        const shape = (typed: string) => at(typed).items.some((i) => i.label === "Shape" && i.auto_import);
        expect(shape("S")).toBe(false);
        expect(shape("let s: S")).toBe(true);
        expect(shape("c;\n  S")).toBe(false);
        expect(shape("c;\n  let t: S")).toBe(true);
        expect(svc.stats().rebuilds).toBe(rebuilds); // all from one program
      },
      { "shapes.ts": SHAPES },
    );
  }, 60_000);
});
