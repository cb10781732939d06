/** A runner's failure as one line a person can act on; the checker's program kept across requests. */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildProgram, checkProject, failureLine, standInForTest, typecheck } from "../../../agents/testgen/verify.js";
import { tempDir } from "../../helpers.js";

describe("failureLine", () => {
  it("joins a line that only introduces the failure with the one that says it, colours removed", () => {
    const vite =
      "\u001b[31mTransform failed with 1 error:\n\n\u001b[31m[TSCONFIG_ERROR] \u001b[0mFailed to load tsconfig '@sindresorhus/tsconfig': Tsconfig not found\n  Plugin: vite:oxc\n";
    expect(failureLine(vite)).toBe(
      "Transform failed with 1 error: [TSCONFIG_ERROR] Failed to load tsconfig '@sindresorhus/tsconfig': Tsconfig not found",
    );
  });

  it("keeps a line that stands alone, cut at 200 characters", () => {
    expect(failureLine("AssertionError: expected '$' to be 'US$'\n    at x.test.ts:3:4")).toBe(
      "AssertionError: expected '$' to be 'US$'",
    );
    expect(failureLine(`Error: ${"x".repeat(300)}`)).toHaveLength(200);
    expect(failureLine(undefined)).toBe("");
  });
});

describe("typecheck across requests on one workspace", () => {
  const cleanups: (() => void)[] = [];
  afterAll(() => cleanups.forEach((c) => c()));
  const request = async (root: string, content: string) => {
    const project = await checkProject(root);
    project.roots.push(join(root, "src/a.ts"));
    standInForTest(project, join(root, "src/a.test.ts"));
    const before = buildProgram(project, []);
    const result = typecheck(project, join(root, "src/a.test.ts"), content, "vitest");
    project.overlay.clear();
    return { before, after: project.program, errors: result.errors.map((e) => `${e.line} TS${e.code}`) };
  };
  const test = 'import { twice } from "./a";\nexport const four: number = twice(2);\n';

  it("answers the same program while nothing changed, and reads a file changed on disk again", async () => {
    const tmp = tempDir("aip-verify-");
    cleanups.push(tmp.cleanup);
    const root = realpathSync(tmp.dir);
    writeFileSync(
      join(root, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, target: "es2022", module: "esnext", moduleResolution: "bundler" },
      }),
    );
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src/a.ts"), "export function twice(n: number): number { return n * 2; }\n");
    const first = await request(root, test);
    expect(first.errors).toEqual([]);
    // The next request's program before its test is known is the last one's: the same files, the same checker.
    const second = await request(root, test);
    expect(second.before).toBe(first.after);
    expect(second.after).toBe(first.after);
    expect(second.errors).toEqual([]);
    // The same size, another type: the file's stamp changed, so it is read and checked again.
    const changed = "export function twice(n: number): bigint { return 2n*1n; }\n";
    expect(changed.length).toBe(readFileSync(join(root, "src/a.ts"), "utf8").length);
    writeFileSync(join(root, "src/a.ts"), changed);
    const third = await request(root, test);
    expect(third.before).not.toBe(second.after);
    expect(third.errors).toEqual(["2 TS2322"]);
  });
});
