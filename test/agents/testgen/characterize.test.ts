/**
 * Characterization: side effects read from the code, inputs from the workspace's calls, the observation
 * run in the real sandbox (bubblewrap, the workspace's own vitest) on a trusted copy of the fixture, the
 * marked stub where the workspace is untrusted, and the mutants the evaluation runs the tests against.
 */
import { cpSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { characterizePlan, observe, stubOf } from "../../../agents/testgen/characterize.js";
import { checkPlan } from "../../../agents/testgen/pipeline.js";
import { checkProject } from "../../../agents/testgen/verify.js";
import { effectReason, effectsOf } from "../../../agents/testgen/effects.js";
import { callSites } from "../../../agents/testgen/inputs.js";
import { planTests } from "../../../agents/testgen/render.js";
import { targetByName } from "../../../agents/testgen/target.js";
import { signatureOf } from "../../../agents/lib/code/signature.js";
import { dialectOf } from "../../../agents/lib/code/language.js";
import { parseFile } from "../../../agents/lib/code/parse.js";
import { mutateFile, testForMutant } from "../../../bench/eval/mutants.js";
import { hasBwrap, ROOT, tempDir, withEnv } from "../../helpers.js";

function effects(source: string, name: string): string[] {
  const file = parseFile(source, dialectOf(undefined, "m.ts"), "m.ts");
  return effectsOf(targetByName(file, name).slice.fn, file.program).map((e) => `${e.kind}: ${e.what}`);
}

describe("effectsOf", () => {
  it("network, file writes, processes and running timers, in the body or in the same file's callees", () => {
    const source = [
      'import { writeFileSync, readFileSync } from "node:fs";',
      'import * as fs from "fs";',
      'import { spawn } from "node:child_process";',
      'import ky from "ky";',
      "export async function get(u: string) { return (await fetch(u)).json(); }",
      "export function save(p: string) { writeFileSync(p, 'x'); }",
      "export function load(p: string) { return readFileSync(p, 'utf8'); }",
      "export function rm(p: string) { return fs.promises.rm(p); }",
      "export function run() { return spawn('ls'); }",
      "export function quit() { process.exit(1); }",
      "export function poll() { return setInterval(() => undefined, 10); }",
      "export function later(f: () => void) { setTimeout(f, 10); }",
      "export async function sleep(ms: number) { await new Promise((r) => setTimeout(r, ms)); return ms; }",
      "function helper(u: string) { return ky.get(u); }",
      "export function indirect(u: string) { return helper(u); }",
      "export function pure(a: number) { const fetch = 1; return a + fetch; }",
    ].join("\n");
    expect(effects(source, "get")).toEqual(["network: uses fetch"]);
    expect(effects(source, "save")).toEqual(["fs-write: fs.writeFileSync"]);
    expect(effects(source, "load")).toEqual([]);
    expect(effects(source, "rm")).toEqual(["fs-write: fs.promises.rm"]);
    expect(effects(source, "run")).toEqual(["process: uses node:child_process"]);
    expect(effects(source, "quit")).toEqual(["process: process.exit"]);
    expect(effects(source, "poll")).toEqual(["timer: setInterval"]);
    expect(effects(source, "later")).toEqual(["timer: setTimeout (not awaited)"]);
    expect(effects(source, "sleep")).toEqual([]);
    expect(effects(source, "indirect")).toEqual(["network: uses ky"]);
    const file = parseFile(source, dialectOf(undefined, "m.ts"), "m.ts");
    expect(effectReason(effectsOf(targetByName(file, "save").slice.fn, file.program))).toBe(
      "not called: it writes files (fs.writeFileSync, line 6); mock that, then assert the result",
    );
  });
});

describe("callSites", () => {
  it("the workspace's calls whose arguments are values, not those that pass variables or functions", () => {
    const files = [
      { path: "src/a.ts", text: 'slug("Hello World");\nslug(name);\nx.slug("A-B", { lower: true });\nslug(() => 1);' },
      {
        path: "test/a.test.ts",
        text: 'expect(slug("Hello World")).toBe("hello-world");\nexpect(slug("é")).toBe("e");',
      },
    ];
    expect(callSites(files, "slug", 2)).toEqual([
      { args: ['"Hello World"'], where: "src/a.ts:1" },
      { args: ['"A-B"', "{ lower: true }"], where: "src/a.ts:3" },
      { args: ['"é"'], where: "test/a.test.ts:2" },
    ]);
  });
});

describe("mutateFile", () => {
  it("operators flipped, constants changed and branches removed, each behind its own id; the original runs unchanged", async () => {
    const source =
      "export function clamp(n: number, max: number): number {\n  if (n > max) return max;\n  return n < 0 ? 0 : n + 1;\n}\n";
    const { text, mutants } = mutateFile(source, "m.ts", ["clamp"], 6);
    const ms = mutants.get("clamp")!;
    expect(new Set(ms.map((m) => m.kind))).toEqual(new Set(["branch", "constant", "operator"]));
    expect(ms.map((m) => m.what)).toContain("`>` → `>=` (line 2)");
    // Run it: each mutant id changes the result of some input, no id leaves the original behaviour.
    const js = (await import("typescript")).default.transpileModule(text, {
      compilerOptions: { module: 99 },
    }).outputText;
    const mod = (await import(`data:text/javascript,${encodeURIComponent(js)}`)) as {
      clamp: (n: number, max: number) => number;
    };
    const inputs: [number, number][] = [
      [5, 5],
      [9, 5],
      [-3, 5],
      [2, 5],
      [0, 5],
    ];
    const original = inputs.map(([a, b]) => mod.clamp(a, b));
    expect(original).toEqual([6, 5, 0, 3, 1]);
    for (const m of ms) {
      Reflect.set(globalThis, "__AGENCY_MUTANT", m.id);
      expect(
        inputs.map(([a, b]) => mod.clamp(a, b)),
        m.what,
      ).not.toEqual(original);
    }
    Reflect.set(globalThis, "__AGENCY_MUTANT", undefined);
    expect(testForMutant("x();\n", "m1")).toBe('x();\n\nReflect.set(globalThis, "__AGENCY_MUTANT", "m1");\n');
  });
});

describe("observe (the workspace's vitest, in the sandbox)", () => {
  const temps: { cleanup: () => void }[] = [];
  afterAll(() => temps.forEach((t) => t.cleanup()));
  function fixture(): string {
    const t = tempDir("aiptgo-");
    temps.push(t);
    cpSync(join(ROOT, "test/fixtures/code/testgen-lib"), t.dir, { recursive: true });
    mkdirSync(join(t.dir, "src/extra"), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(t.dir, "node_modules"));
    return t.dir;
  }
  const source = `
export function shout(s: string): string { return s.toUpperCase() + "!"; }
export function roll(): number { return Math.random(); }
export function strict(n: number): number { if (n < 0) throw new RangeError("negative"); return n * 2; }
export function hang(): Promise<number> { return new Promise(() => undefined); }
export function stamp(): Date { return new Date(0); }
export function options(n: number) { return { n, retry: (k: number) => k * n }; }
export function marked(v: number) { return { [Symbol("mark")]: true, value: v }; }
export function spread(n: number): number[] { const a = [n]; Reflect.set(a, "1.5", 2); return a; }
export function unit(u: string) { return (n: number) => n + u; }
`;
  function plan(name: string) {
    const file = parseFile(source, dialectOf(undefined, "src/obs.ts"), "src/obs.ts");
    const sig = signatureOf(targetByName(file, name).slice, source);
    return planTests({
      sig,
      framework: "vitest",
      ts: true,
      specifier: "./obs.js",
      defaultExport: false,
      isStatic: false,
      notes: [],
    });
  }

  let observed: string | undefined;
  /**
   * The copy with src/obs.ts that the sandboxed tests run, made once: its warm runner starts once for all
   * of them, and evaluates the workspace's modules afresh for each generated file.
   */
  function observedFixture(): string {
    if (observed === undefined) {
      observed = fixture();
      writeFileSync(join(observed, "src/obs.ts"), source);
    }
    return observed;
  }

  it.skipIf(!hasBwrap)(
    "values, throws, Dates pinned; a random result and a call that never settles are not asserted, and said so",
    async () => {
      const root = observedFixture();
      await withEnv({ AIP_TRUSTED_WORKSPACES: root }, async () => {
        const a = await observe({
          root,
          framework: "vitest",
          testPath: "src/obs.test.ts",
          plan: plan("shout"),
          callee: "shout",
          setup: "",
          vectors: [['"hi"'], ['""']],
          timeoutMs: 60_000,
        });
        expect(a.status).toBe("observed");
        expect(a.cases.map((c) => [c.title, c.body])).toEqual([
          ['observed: shout("hi") → "HI!"', 'expect(shout("hi")).toBe("HI!");'],
          ['observed: shout("") → "!"', 'expect(shout("")).toBe("!");'],
        ]);
        const b = await observe({
          root,
          framework: "vitest",
          testPath: "src/obs.test.ts",
          plan: plan("strict"),
          callee: "strict",
          setup: "",
          vectors: [["-1"], ["3"]],
          timeoutMs: 60_000,
        });
        expect(b.cases.map((c) => c.body)).toEqual([
          "expect(() => strict(-1)).toThrow(RangeError);",
          "expect(strict(3)).toBe(6);",
        ]);
        const r = await observe({
          root,
          framework: "vitest",
          testPath: "src/obs.test.ts",
          plan: plan("roll"),
          callee: "roll",
          setup: "",
          vectors: [[]],
          timeoutMs: 60_000,
        });
        expect(r.cases).toEqual([]);
        expect(r.reason).toBe("not pinned: roll() gave a different result on a second call");
        const h = await observe({
          root,
          framework: "vitest",
          testPath: "src/obs.test.ts",
          plan: plan("hang"),
          callee: "hang",
          setup: "",
          vectors: [[]],
          timeoutMs: 60_000,
        });
        expect(h.reason).toBe("not pinned: hang() did not settle within 1000 ms");
        const d = await observe({
          root,
          framework: "vitest",
          testPath: "src/obs.test.ts",
          plan: plan("stamp"),
          callee: "stamp",
          setup: "",
          vectors: [[]],
          timeoutMs: 60_000,
        });
        expect(d.cases.map((c) => c.body)).toEqual(['expect(stamp()).toEqual(new Date("1970-01-01T00:00:00.000Z"));']);
      });
    },
    300_000,
  );

  it.skipIf(!hasBwrap)(
    "data with functions inside is pinned with any function, symbol keys by toMatchObject; a returned function is called",
    async () => {
      const root = observedFixture();
      await withEnv({ AIP_TRUSTED_WORKSPACES: root }, async () => {
        const run = (name: string, vectors: string[][], resultArgs?: string[][]) =>
          observe({
            root,
            framework: "vitest",
            testPath: "src/obs.test.ts",
            plan: plan(name),
            callee: name,
            setup: "",
            vectors,
            ...(resultArgs ? { resultArgs } : {}),
            timeoutMs: 60_000,
          });
        expect((await run("options", [["2"]])).cases.map((c) => c.body)).toEqual([
          "expect(options(2)).toEqual({ n: 2, retry: expect.any(Function) });",
        ]);
        expect((await run("marked", [["3"]])).cases.map((c) => c.body)).toEqual([
          "expect(marked(3)).toMatchObject({ value: 3 });",
        ]);
        const s = await run("spread", [["1"]]);
        expect(s.cases).toEqual([]);
        expect(s.reason).toBe("not pinned: spread(1) returned an Array, not plain data");
        expect((await run("unit", [['"m"']], [["1"], ["0"]])).cases.map((c) => c.body)).toEqual([
          'expect(unit("m")(1)).toBe("1m");',
          'expect(unit("m")(0)).toBe("0m");',
        ]);
      });
    },
    300_000,
  );

  it.skipIf(!hasBwrap)(
    "one runner start: the plan's other cases run beside the observed calls, and the check run is not started again",
    async () => {
      const root = observedFixture();
      const p = plan("shout");
      const right = { title: 'example: shout("a") → "A!"', body: 'expect(shout("a")).toBe("A!");', async: false };
      const wrong = { title: 'example: shout("b") → "b"', body: 'expect(shout("b")).toBe("b");', async: false };
      p.cases.unshift({ ...right, kind: "example" }, { ...wrong, kind: "example" });
      await withEnv({ AIP_TRUSTED_WORKSPACES: root }, async () => {
        const o = await characterizePlan(p, {
          root,
          framework: "vitest",
          testPath: "src/obs.test.ts",
          effects: [],
          vectors: [['"hi"']],
          timeoutMs: 60_000,
        });
        expect(o.ran?.tests.map((t) => [t.title, t.status])).toEqual([
          [right.title, "passed"],
          [wrong.title, "failed"],
        ]);
        expect(p.cases.map((c) => c.title)).toEqual([right.title, wrong.title, 'observed: shout("hi") → "HI!"']);
        // Told the outcomes, the check run leaves the runner alone: the failed example becomes a todo
        // with the observation run's message, in that run's time.
        const checked = await checkPlan(p, {
          project: await checkProject(root),
          testFile: join(root, "src/obs.test.ts"),
          testPath: "src/obs.test.ts",
          ts: true,
          runTimeoutMs: 60_000,
          root,
          ran: o.ran!,
        });
        expect(checked.keep.map((c) => c.title)).toEqual([right.title, 'observed: shout("hi") → "HI!"']);
        expect(checked.madeTodo).toEqual([
          { title: wrong.title, reason: expect.stringMatching(/^failed: .*expected/) },
        ]);
        expect(checked.checks.run).toBe("failed");
        expect(checked.checks.run_ms).toBe(o.ran!.ms);
      });
    },
    300_000,
  );

  it("a function with side effects is not called in the check run either: its placeholder is a marked stub", async () => {
    const root = fixture();
    const p = plan("shout");
    const o = await characterizePlan(p, {
      root,
      framework: "vitest",
      testPath: "src/obs.test.ts",
      effects: [{ kind: "network", what: "uses fetch", line: 1 }],
      vectors: [['"hi"']],
      timeoutMs: 60_000,
    });
    expect(o.reason).toMatch(/network/);
    expect(p.cases.some((c) => c.kind === "smoke")).toBe(false);
    expect(p.stubs?.map((s) => s.reason)).toEqual([o.reason]);
  });

  it("an untrusted workspace runs nothing: the stub says how to trust it", async () => {
    const root = fixture();
    const o = await withEnv({ AIP_TRUSTED_WORKSPACES: undefined, AIP_TRUST_FILE: "/nonexistent" }, () =>
      observe({
        root,
        framework: "vitest",
        testPath: "src/obs.test.ts",
        plan: plan("shout"),
        callee: "shout",
        setup: "",
        vectors: [['"hi"']],
        timeoutMs: 60_000,
      }),
    );
    expect(o.status).toBe("untrusted");
    expect(o.cases).toEqual([]);
    expect(o.reason).toMatch(/^not observed: the workspace is not trusted; run `aip trust /);
    const stub = stubOf(
      {
        title: "returns a value for typical input",
        body: 'const result = shout("s");\nexpect(result).toBeDefined(); // TODO: assert the expected value',
        async: false,
        kind: "smoke",
      },
      o.reason!,
    );
    expect(stub.body).toBe('shout("s");\n// TODO: assert what it returns');
  });
});
