/**
 * testgen's checks on a real workspace (test/fixtures/code/testgen-lib): the generated file typechecked
 * in-process, run by the workspace's own vitest (this checkout's, linked in as the copy's node_modules)
 * in a child process; a hanging runner killed at its timeout.
 */
import { chmodSync, cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { standaloneContext } from "../../../agents/lib/runtime/context.js";
import type { HandlerContext } from "../../../agents/lib/runtime/types.js";
import { createTestgen } from "../../../agents/testgen/handler.js";
import { createLogger } from "../../../protocol/util/log.js";
import type { AipRequest } from "../../../protocol/contract/schemas.js";
import { ROOT, tempDir } from "../../helpers.js";

const LIB = join(ROOT, "test/fixtures/code/testgen-lib");
const temps: { cleanup: () => void }[] = [];
// The copies are the owner's own workspaces: trusted, so their runner runs (sandboxed).
const trustedBefore = process.env.AIP_TRUSTED_WORKSPACES;
process.env.AIP_TRUSTED_WORKSPACES = `${tmpdir()}/aiptg*`;
afterAll(() => {
  temps.forEach((t) => t.cleanup());
  if (trustedBefore === undefined) delete process.env.AIP_TRUSTED_WORKSPACES;
  else process.env.AIP_TRUSTED_WORKSPACES = trustedBefore;
});

/** A copy of the fixture library; `modules` links this checkout's node_modules in (vitest installed). */
function workspace(modules: boolean): string {
  const t = tempDir("aiptg-");
  temps.push(t);
  cpSync(LIB, t.dir, { recursive: true });
  if (modules) symlinkSync(join(ROOT, "node_modules"), join(t.dir, "node_modules"));
  return t.dir;
}

const testgen = createTestgen();
function ctx(): HandlerContext {
  return standaloneContext({
    traceId: "t",
    budgetMs: 120_000,
    log: createLogger({ agentName: "test", destination: false }),
  });
}
type Payload = Record<string, any>;
async function gen(
  root: string,
  fn: string,
  constraints: Record<string, unknown> = {},
  source?: string,
): Promise<Payload> {
  const context = { workspace_root: root, file_path: "src/money.ts", ...(source ? { source_code: source } : {}) };
  return (await testgen(
    { action: "testgen", context, constraints: { function: fn, ...constraints } } as AipRequest,
    ctx(),
  )) as Payload;
}

describe("testgen with the workspace's vitest", () => {
  const root = workspace(true);

  it("@example results become expect lines, run and kept; a recorded result replaces toBeDefined", async () => {
    const p = await gen(root, "format");
    expect(p.content).toContain('expect(format({ amount: 5, currency: "EUR" })).toBe("5.00 EUR");');
    expect(p.content).toContain('expect(format({ amount: 3, currency: "JPY" })).toBe("3 JPY");');
    // The object argument gets its required properties, the literal union its first member.
    expect(p.content).toContain('expect(format({ amount: 1, currency: "EUR" })).toBe("1.00 EUR");');
    expect(p.content).not.toContain("toBeDefined");
    expect(p.tests).toEqual({
      kept: 3,
      todo: 0,
      dropped: 0,
      value_assertions: 3,
      from_examples: 2,
      observed: 1,
      stubs: 0,
      verdicts: [],
    });
    expect(p.checks).toMatchObject({ typecheck: "passed", run: "passed", runner: "vitest" });
    // The run's file is gone again.
    expect(readdirSync(join(root, "src")).filter((f) => f.includes(".agency-"))).toEqual([]);
  }, 120_000);

  it("a guarded throw gets toThrow with the input that trips it; the multi-line example is asserted", async () => {
    const p = await gen(root, "split");
    expect(p.content).toContain("expect(split(10, 4)).toEqual([2.5, 2.5, 2.5, 2.5]);");
    expect(p.content).toContain("expect(() => split(1, 0)).toThrow(RangeError);");
    expect(p.content).toMatch(/expect\(split\([^)]*\)\)\.toEqual\(\[1\]\);/);
    expect(p.tests).toMatchObject({ kept: 9, todo: 0, dropped: 0 });
  }, 120_000);

  it("a case that fails its run becomes it.todo with the failure; one that fails typechecking is dropped", async () => {
    const source = (await import("node:fs"))
      .readFileSync(join(LIB, "src/money.ts"), "utf8")
      .replace(
        'console.log(symbolOf("USD")); // "$"',
        'console.log(symbolOf("USD")); // "US$"\n * symbolOf("GBP") // => "£"',
      );
    const p = await gen(root, "symbolOf", {}, source);
    expect(p.tests.verdicts).toEqual([
      {
        test: 'example: symbolOf("GBP") → "£"',
        outcome: "dropped",
        reason: expect.stringMatching(/^typecheck: TS2345: Argument of type '"GBP"' is not assignable/),
      },
      { test: 'example: symbolOf("USD") → "US$"', outcome: "todo", reason: expect.stringMatching(/^run: .*US\$/) },
    ]);
    expect(p.content).toContain(`symbolOf(\\"USD\\") → \\"US$\\" (failed: AssertionError: expected '$' to be 'US$'`);
    expect(p.content).toContain('expect(symbolOf("EUR")).toBe("€");');
    expect(p.content).not.toContain("GBP");
    expect(p.tests).toMatchObject({ kept: 2, todo: 1, dropped: 1 });
    expect(p.checks).toMatchObject({ typecheck: "failed", run: "failed" });
  }, 120_000);
});

describe("testgen without a runner", () => {
  // One copy for the tests that only read it (the others' sources are buffers over its src/money.ts).
  const root = workspace(false);

  it("a parameter typed by an exported class is an instance of it, imported with the function; no run", async () => {
    const p = await gen(root, "total");
    expect(p.content).toContain('import { total, Ledger } from "./money.js";');
    // Nothing was run, so nothing is pinned: the call is a marked it.skip, never a lone toBeDefined.
    expect(p.content).toContain('total(new Ledger("name"), "EUR");\n    // TODO: assert what it returns');
    expect(p.content).toMatch(
      /it\.skip\(\s*"returns a value for typical input \(not pinned: not run \(the workspace has no vitest installed/,
    );
    expect(p.content).not.toContain("toBeDefined");
    expect(p.tests).toMatchObject({ kept: 0, stubs: 1, value_assertions: 0 });
    expect(p.content).not.toMatch(/total\([^)]*undefined/);
    expect(p.checks).toMatchObject({ typecheck: "passed", run: "skipped", runner: null });
    expect(p.checks.notes).toContain("not run: the workspace has no vitest installed (node_modules/.bin/vitest)");
  }, 60_000);

  it("an example that uses another export of the module unimported: the test imports it beside the function", async () => {
    const source = [
      "export enum Level { error = 0, info = 2 }",
      "/**",
      " * Whether level `a` is more severe than `b`.",
      " * @example",
      " * greater(Level.error, Level.info); // true",
      " */",
      "export function greater(a: Level, b: Level): boolean {",
      "  return a < b;",
      "}",
      "",
    ].join("\n");
    const p = await gen(root, "greater", {}, source);
    expect(p.content).toContain('import { greater, Level } from "./money.js";');
    expect(p.content).toContain("expect(greater(Level.error, Level.info)).toBe(true);");
    expect(p.checks).toMatchObject({ typecheck: "passed" });
    expect(p.tests).toMatchObject({ from_examples: 1, dropped: 0 });
  }, 60_000);

  it("a throw without a guard the arguments can trip gets no toThrow, only a todo", async () => {
    const source =
      "export function open(path: string): string {\n  if (Math.random() > 2) return path;\n  throw new Error(path);\n}\n";
    const p = await gen(root, "open", {}, source);
    expect(p.content).not.toContain("toThrow");
    expect(p.content).toContain('it.todo("throws an Error: find an input that makes it throw");');
  }, 60_000);

  it("a runner that hangs is killed at its timeout and its tests are reported dropped", async () => {
    // A copy of its own: the hanging runner it installs would be every later test's runner.
    const hung = workspace(false);
    mkdirSync(join(hung, "node_modules/.bin"), { recursive: true });
    // Hangs, and so does a child of it: the whole process group goes.
    writeFileSync(join(hung, "node_modules/.bin/vitest"), "#!/bin/sh\nsleep 300 &\nsleep 300\n");
    chmodSync(join(hung, "node_modules/.bin/vitest"), 0o755);
    const p = await gen(hung, "symbolOf", { run_timeout_ms: 1500 });
    expect(p.checks).toMatchObject({ typecheck: "passed", run: "timeout", runner: "vitest" });
    expect(p.tests).toMatchObject({ kept: 0, todo: 0, dropped: 2, value_assertions: 0 });
    for (const v of p.tests.verdicts)
      expect(v).toMatchObject({ outcome: "dropped", reason: "run: the vitest run did not finish in 1500 ms: killed" });
    expect(p.content).not.toContain("it(");
    expect(readdirSync(join(hung, "src")).filter((f) => f.includes(".agency-"))).toEqual([]);
  }, 60_000);
});

/** A workspace from files (path → text), optionally with this checkout's node_modules linked in. */
function files(tree: Record<string, string>, modules = false): string {
  const t = tempDir("aiptgw-");
  temps.push(t);
  for (const [rel, text] of Object.entries(tree)) {
    mkdirSync(join(t.dir, rel, ".."), { recursive: true });
    writeFileSync(join(t.dir, rel), text);
  }
  if (modules) symlinkSync(join(ROOT, "node_modules"), join(t.dir, "node_modules"));
  return t.dir;
}
async function genAt(root: string, file: string, fn: string): Promise<Payload> {
  return (await testgen(
    {
      action: "testgen",
      context: { workspace_root: root, file_path: file },
      constraints: { function: fn },
    } as AipRequest,
    ctx(),
  )) as Payload;
}

describe("imports as the workspace resolves them", () => {
  let bundler: string | undefined;
  /**
   * One workspace, made once, for two tests that run what they generate: bundler resolution, the ES2022
   * lib without the DOM's, @types/node. Its warm runner starts once for both.
   */
  function bundlerWorkspace(): string {
    bundler ??= files(
      {
        "tsconfig.json": JSON.stringify({
          compilerOptions: {
            module: "ESNext",
            moduleResolution: "Bundler",
            lib: ["ES2022"],
            types: ["node"],
            strict: true,
          },
        }),
        "src/find.ts":
          'export function find(xs: number[], n: number): number | undefined {\n  return xs.find((x) => x === n + 100);\n}\n\nexport function tag(v: string): { value: string } {\n  return { [Symbol.for("tag")]: true, value: v };\n}\n',
        "src/http.ts": "export function code(res: Response): number {\n  return res.status;\n}\n",
      },
      true,
    );
    return bundler;
  }

  it("nodenext with allowImportingTsExtensions: the file's own .ts style, for the code and its types", async () => {
    const root = files({
      "package.json": '{ "type": "module" }',
      "tsconfig.json": JSON.stringify({
        compilerOptions: {
          module: "NodeNext",
          moduleResolution: "NodeNext",
          allowImportingTsExtensions: true,
          verbatimModuleSyntax: true,
          strict: true,
          noEmit: true,
        },
        include: ["src"],
      }),
      "src/types.ts": "export abstract class Bus {\n  readonly events: string[] = [];\n}\n",
      "src/hooks.ts":
        'import type { Bus } from "./types.ts";\n\nexport function emit(bus: Bus, event: string): number {\n  return bus.events.push(event);\n}\n',
      "src/clock.ts": "export function twice(n: number): number {\n  return n * 2;\n}\n",
    });
    const p = await genAt(root, "src/hooks.ts", "emit");
    expect(p.content).toContain('import { emit } from "./hooks.ts";');
    expect(p.content).toContain('import type { Bus } from "./types.ts";');
    expect(p.content).toContain('emit({} as unknown as Bus, "event");');
    // No vitest installed: typechecked against a stub of its types, the run skipped, and said so.
    expect(p.checks).toMatchObject({
      typecheck: "passed",
      framework_types: "stub",
      run: "skipped",
      skipped: { run: "the workspace has no vitest installed (node_modules/.bin/vitest)" },
    });
    expect(p.checks.skipped.typecheck).toBeUndefined();
    // A file without a relative import to follow: the suffix nodenext ESM requires.
    expect((await genAt(root, "src/clock.ts", "twice")).content).toContain('import { twice } from "./clock.js";');
  }, 60_000);

  it("a parameter typed by an abstract generic class with `any` is a cast that keeps `any` (as `unknown` it would break the constraint)", async () => {
    const root = files({
      "tsconfig.json": JSON.stringify({
        compilerOptions: { module: "ESNext", moduleResolution: "Bundler", strict: true },
      }),
      "src/box.ts":
        "export abstract class Box<T extends Record<string, unknown>> {\n  constructor(readonly items: T[]) {}\n}\n\nexport function size(box: Box<any>): number {\n  return box.items.length;\n}\n",
    });
    const p = await genAt(root, "src/box.ts", "size");
    expect(p.content).toContain('import type { Box } from "./box";');
    expect(p.content).toContain("size({} as unknown as Box<any>);");
    expect(p.tests).toMatchObject({ kept: 0, stubs: 1, dropped: 0 });
    expect(p.checks.typecheck).toBe("passed");
  }, 60_000);

  it("a parameter typed by a workspace class gets a real instance, the class imported as a value", async () => {
    const root = files(
      {
        "package.json": '{ "type": "module" }',
        "tsconfig.json": JSON.stringify({
          compilerOptions: {
            module: "NodeNext",
            moduleResolution: "NodeNext",
            strict: true,
            verbatimModuleSyntax: true,
          },
        }),
        "src/clock.ts":
          "export class Clock {\n  constructor(readonly start: number, readonly zone?: string) {}\n  now(): number {\n    return this.start;\n  }\n}\n",
        "src/tick.ts":
          'import { Clock } from "./clock.js";\n\nexport function tick(clock: Clock, by: number): number {\n  return clock.now() + by;\n}\n\nexport function size(bag: Bag<any>): number {\n  return bag.items.length;\n}\n\nexport class Bag<T extends object, K extends string = string> {\n  readonly items: T[] = [];\n  key?: K;\n}\n',
      },
      true,
    );
    const p = await genAt(root, "src/tick.ts", "tick");
    expect(p.content).toContain('import { tick } from "./tick.js";\nimport { Clock } from "./clock.js";\n');
    expect(p.content).toContain("expect(tick(new Clock(1), 1)).toBe(2);");
    expect(p.content).not.toContain("import type");
    // A number's fourth variant, observed.
    expect(p.content).toContain("expect(tick(new Clock(1), 100)).toBe(101);");
    expect(p.tests).toMatchObject({ kept: 5, dropped: 0, todo: 0 });
    // A generic class written with `any` and its defaults (`Bag<any>` is `Bag<any, string>`) is constructed too.
    const q = await genAt(root, "src/tick.ts", "size");
    expect(q.content).toContain('import { size, Bag } from "./tick.js";');
    expect(q.content).toContain("expect(size(new Bag())).toBe(0);");
  }, 120_000);

  it("recording: undefined for typical input is asserted toBeUndefined; an object with symbol keys by toMatchObject", async () => {
    const root = bundlerWorkspace();
    const p = await genAt(root, "src/find.ts", "find");
    expect(p.content).toContain("expect(find([1], 1)).toBeUndefined();");
    expect(p.tests).toMatchObject({ kept: 7, todo: 0, dropped: 0, value_assertions: 7 });
    const q = await genAt(root, "src/find.ts", "tag");
    // Source text cannot write the symbol key, and toEqual would then fail: the rest is matched.
    expect(q.content).not.toContain("toBeDefined");
    expect(q.content).toContain('expect(tag("v")).toMatchObject({ value: "v" });');
    expect(q.tests).toMatchObject({ todo: 0, dropped: 0, stubs: 0 });
    expect(q.tests.value_assertions).toBe(q.tests.kept);
  }, 120_000);

  it("web globals are real instances: Request, Response, Blob, FormData (from the DOM lib or @types/node)", async () => {
    const root = files({
      "tsconfig.json": JSON.stringify({
        compilerOptions: { module: "ESNext", moduleResolution: "Bundler", lib: ["ES2022", "DOM"], strict: true },
      }),
      "src/http.ts":
        "export function describeAll(req: Request, res: Response, body: Blob, form: FormData): string {\n  return `${req.method} ${res.status} ${body.size} ${[...form.keys()].length}`;\n}\n",
    });
    const p = await genAt(root, "src/http.ts", "describeAll");
    expect(p.content).toContain(
      'describeAll(\n      new Request("https://example.com/"),\n      new Response("x"),\n      new Blob(["x"]),\n      new FormData(),\n    );',
    );
    expect(p.checks.typecheck).toBe("passed");
    // Without the DOM lib, @types/node (undici-types) declares them: the same instances.
    const q = await genAt(bundlerWorkspace(), "src/http.ts", "code");
    expect(q.content).toContain('expect(code(new Response("x"))).toBe(200);');
  }, 60_000);

  it("ES modules without a moduleResolution: bundler resolution finds vitest, extensionless imports as the file's", async () => {
    const root = files(
      {
        "package.json": '{ "name": "merge" }',
        "tsconfig.json": JSON.stringify({ compilerOptions: { target: "ESNext", module: "ESNext", strict: true } }),
        "src/_utils.ts": "export const isObject = (v: unknown): boolean => typeof v === 'object' && v !== null;\n",
        "src/merge.ts":
          'import { isObject } from "./_utils";\n\nexport function keys(a: Record<string, number>): string[] {\n  return isObject(a) ? Object.keys(a) : [];\n}\n',
      },
      true,
    );
    const p = await genAt(root, "src/merge.ts", "keys");
    expect(p.content).toContain('import { keys } from "./merge";');
    expect(p.content).toContain("expect(keys({} as unknown as Parameters<typeof keys>[0])).toEqual([]);");
    expect(p.checks).toMatchObject({ typecheck: "passed", framework_types: "workspace", run: "passed", skipped: {} });
    expect(p.checks.notes).toContain(
      "tsconfig.json leaves moduleResolution unset with ES module output: bundler resolution, TypeScript 6's default (TypeScript 5 would use classic, which resolves no package)",
    );
  }, 120_000);

  it("a workspace whose runner cannot load any file: the reason, and a file that still holds a test", async () => {
    // vite cannot transform anything while tsconfig.json extends a package that is not installed.
    const root = files(
      {
        "package.json": '{ "type": "module" }',
        "tsconfig.json": JSON.stringify({ extends: "@agency-missing/tsconfig", compilerOptions: { strict: true } }),
        "src/clock.ts": "export function answer(): number {\n  return 42;\n}\n",
      },
      true,
    );
    const p = await genAt(root, "src/clock.ts", "answer");
    expect(p.checks.run).toBe("load-error");
    const reason = p.tests.verdicts[0].reason as string;
    expect(reason).toMatch(
      /^run: Transform failed with 1 error: .*Failed to load tsconfig '@agency-missing\/tsconfig'/,
    );
    expect(p.content).toContain("it.todo(");
    expect(p.content).toContain(JSON.stringify(`answer: no generated case was kept (${reason})`));
    expect(p.content).not.toContain("it(");
  }, 120_000);
});
