/** The framework stub across requests: kept among the program's roots while the workspace lacks the types. */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildProgram, checkProject, standInForTest, typecheck } from "../../../agents/testgen/verify.js";
import { tempDir } from "../../helpers.js";

describe("a workspace without the framework's types", () => {
  const cleanups: (() => void)[] = [];
  afterAll(() => cleanups.forEach((c) => c()));
  const request = async (root: string, content: string) => {
    const project = await checkProject(root);
    project.roots.push(join(root, "src/a.ts"));
    standInForTest(project, join(root, "src/a.test.ts"), "vitest");
    const before = buildProgram(project, []);
    const result = typecheck(project, join(root, "src/a.test.ts"), content, "vitest");
    project.overlay.clear();
    return {
      before,
      after: project.program,
      stub: result.stub,
      errors: result.errors.map((e) => `${e.line} TS${e.code}`),
    };
  };
  // Passes against the stub (everything is `any`), fails against the real types (a string where a number goes).
  const test =
    'import { expect, it } from "vitest";\nimport { twice } from "./a";\nit("t", () => expect(twice(2)).toBe("4"));\n';

  it("checks against the stub in the program built before the test, until the types are installed", async () => {
    const tmp = tempDir("aip-verify-stub-");
    cleanups.push(tmp.cleanup);
    const root = realpathSync(tmp.dir);
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src/a.ts"), "export function twice(n: number): number { return n * 2; }\n");
    const first = await request(root, test);
    expect(first.stub).toMatch(/does not have vitest's types installed/);
    expect(first.errors).toEqual([]);
    // The next request's first program already has the stub: the check answers it again, checker and all.
    const second = await request(root, test);
    expect(second.before).toBe(first.after);
    expect(second.after).toBe(first.after);
    expect(second.stub).toBe(first.stub);
    expect(second.errors).toEqual([]);
    // vitest's types installed: the program's files change, the stub goes, the real types judge the test.
    mkdirSync(join(root, "node_modules/vitest"), { recursive: true });
    writeFileSync(
      join(root, "node_modules/vitest/package.json"),
      JSON.stringify({ name: "vitest", version: "4.0.0", types: "index.d.ts" }),
    );
    writeFileSync(
      join(root, "node_modules/vitest/index.d.ts"),
      "export declare function it(name: string, fn: () => void): void;\nexport declare function expect(v: number): { toBe(w: number): void };\n",
    );
    const third = await request(root, test);
    expect(third.stub).toBeUndefined();
    expect(third.errors).toEqual(["3 TS2345"]);
    expect(third.after!.getSourceFiles().map((sf) => sf.fileName)).not.toContainEqual(
      expect.stringContaining("__agency_vitest_stub"),
    );
  });
});

describe("lib replacement packages", () => {
  const cleanups: (() => void)[] = [];
  afterAll(() => cleanups.forEach((c) => c()));
  // A replacement for the ES2015 collections lib that declares what the real one does not.
  const workspace = (compilerOptions: Record<string, unknown>): string => {
    const tmp = tempDir("aip-verify-lib-");
    cleanups.push(tmp.cleanup);
    const root = realpathSync(tmp.dir);
    writeFileSync(join(root, "tsconfig.json"), JSON.stringify({ compilerOptions }));
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src/a.ts"), "export const one = 1;\n");
    mkdirSync(join(root, "node_modules/@typescript/lib-es2015/collection"), { recursive: true });
    writeFileSync(
      join(root, "node_modules/@typescript/lib-es2015/package.json"),
      JSON.stringify({ name: "@typescript/lib-es2015", version: "1.0.0" }),
    );
    writeFileSync(
      join(root, "node_modules/@typescript/lib-es2015/collection/index.d.ts"),
      "declare const replacedCollections: number;\n",
    );
    return root;
  };
  const check = async (root: string): Promise<string[]> => {
    const project = await checkProject(root);
    const result = typecheck(
      project,
      join(root, "src/a.test.ts"),
      "export const n: number = replacedCollections;\n",
      "vitest",
    );
    project.overlay.clear();
    return result.errors.map((e) => `${e.line} TS${e.code}`);
  };
  const options = { strict: true, target: "es2022", module: "esnext", moduleResolution: "bundler", types: [] };

  it("are used only when the workspace's tsconfig turns them on", async () => {
    expect(await check(workspace(options))).toEqual(["1 TS2304"]);
    expect(await check(workspace({ ...options, libReplacement: true }))).toEqual([]);
  });
});
