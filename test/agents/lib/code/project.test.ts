import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadProject } from "../../../../agents/lib/code/project.js";
import { tempDir } from "../../../helpers.js";

describe("loadProject", () => {
  let t: { dir: string; cleanup: () => void };
  let root: string;
  const write = (rel: string, text: string): void => {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
  beforeEach(() => {
    t = tempDir("aipp-");
    root = realpathSync(t.dir);
    write("src/a.ts", "export const a = 1;\n");
    write("src/b.tsx", "export const b = 2;\n");
    write("dist/a.js", "exports.a = 1;\n");
    write(".gitignore", "dist\n");
  });
  afterEach(() => t.cleanup());

  it("uses tsconfig.json with extends and include, and notes a missing node_modules", async () => {
    write("tsconfig.base.json", JSON.stringify({ compilerOptions: { strict: true, target: "ES2020" } }));
    write(
      "tsconfig.json",
      `{ // comments are allowed
        "extends": "./tsconfig.base.json",
        "compilerOptions": { "module": "NodeNext", "moduleResolution": "NodeNext", "outDir": "out" },
        "include": ["src/**/*.ts"],
      }`,
    );
    const p = await loadProject(root);
    expect(p.configPath).toBe(join(root, "tsconfig.json"));
    expect(p.fileNames).toEqual([join(root, "src/a.ts")]);
    expect(p.options.target).toBe(ts.ScriptTarget.ES2020);
    expect(p.options.strict).toBe(true);
    expect(p.options.module).toBe(ts.ModuleKind.NodeNext);
    expect(p.options.noEmit).toBe(true);
    expect(p.fallback).toEqual(["no node_modules: package imports do not resolve; types come from the lib files only"]);
  });

  it("falls back to defaults without a tsconfig.json, over the TypeScript files only (gitignored ones skipped)", async () => {
    mkdirSync(join(root, "node_modules"));
    const p = await loadProject(root);
    expect(p.configPath).toBeUndefined();
    expect(p.fileNames).toEqual([join(root, "src/a.ts"), join(root, "src/b.tsx")]);
    expect(p.options.strict).toBe(true);
    expect(p.options.moduleResolution).toBe(ts.ModuleResolutionKind.Bundler);
    expect(p.fallback).toHaveLength(1);
    expect(p.fallback[0]).toMatch(/^no tsconfig\.json: default options/);
  });

  it("falls back to defaults on a tsconfig.json that does not parse, saying why", async () => {
    write("tsconfig.json", '{ "compilerOptions": { "strict": tru');
    const p = await loadProject(root);
    expect(p.fileNames).toEqual([join(root, "src/a.ts"), join(root, "src/b.tsx")]);
    expect(p.fallback[0]).toMatch(/^tsconfig\.json does not parse \(.+\): default options/);
    expect(p.fallback[1]).toMatch(/^no node_modules/);
  });

  it("keeps the options of a solution-style tsconfig.json over the workspace's files, and reports bad options and extends", async () => {
    write(
      "tsconfig.json",
      JSON.stringify({ extends: "@nowhere/base", compilerOptions: { target: "ES2021", bogus: 1 }, files: [] }),
    );
    const p = await loadProject(root);
    expect(p.options.target).toBe(ts.ScriptTarget.ES2021);
    expect(p.fileNames).toEqual([join(root, "src/a.ts"), join(root, "src/b.tsx")]);
    expect(p.fallback.join("\n")).toMatch(/extends "@nowhere\/base", which is not in the workspace/);
    expect(p.fallback.join("\n")).toMatch(/Unknown compiler option 'bogus'/);
    expect(p.fallback.join("\n")).toMatch(/lists no files/);
  });

  it("never reads a config outside the workspace", async () => {
    const outside = tempDir("aipo-");
    try {
      writeFileSync(join(outside.dir, "base.json"), JSON.stringify({ compilerOptions: { target: "ES5" } }));
      write("tsconfig.json", JSON.stringify({ extends: join(outside.dir, "base.json") }));
      const p = await loadProject(root);
      expect(p.options.target).toBeUndefined();
      expect(p.fallback.join("\n")).toMatch(/which is not in the workspace/);
    } finally {
      outside.cleanup();
    }
  });
  it("ES module output without a moduleResolution resolves as a bundler (TypeScript 6's default), saying so", async () => {
    mkdirSync(join(root, "node_modules"));
    write("tsconfig.json", JSON.stringify({ compilerOptions: { target: "ESNext", module: "ESNext", strict: true } }));
    const p = await loadProject(root);
    expect(p.options.moduleResolution).toBe(ts.ModuleResolutionKind.Bundler);
    expect(p.fallback).toEqual([
      "tsconfig.json leaves moduleResolution unset with ES module output: bundler resolution, TypeScript 6's default (TypeScript 5 would use classic, which resolves no package)",
    ]);
    // A stated resolution, or CommonJS output, is the workspace's own: kept as is.
    write(
      "tsconfig.json",
      JSON.stringify({ compilerOptions: { module: "ESNext", moduleResolution: "Node10", ignoreDeprecations: "5.0" } }),
    );
    expect((await loadProject(root)).options.moduleResolution).toBe(ts.ModuleResolutionKind.Node10);
    write("tsconfig.json", JSON.stringify({ compilerOptions: { module: "CommonJS" } }));
    const cjs = await loadProject(root);
    expect(cjs.options.moduleResolution).toBeUndefined();
    expect(cjs.fallback).toEqual([]);
  });
});
