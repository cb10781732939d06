/** How a generated test imports the code under test: the workspace's resolution, the file's own style. */
import { describe, expect, it } from "vitest";
import { importStyle, importSuffix, testLocation } from "../../../agents/testgen/paths.js";

const base = { nodeResolution: false, tsExtensions: false, esm: false };

describe("importStyle", () => {
  it("follows the file's own relative imports: .ts with allowImportingTsExtensions, .js, none", () => {
    expect(
      importStyle({
        ...base,
        nodeResolution: true,
        esm: true,
        tsExtensions: true,
        imports: ["./types.ts", "./utils.ts"],
      }),
    ).toEqual({ style: "ts", why: "the file's own relative imports" });
    expect(importStyle({ ...base, imports: ["./options.js", "../core/constants.js", "node:fs"] }).style).toBe("js");
    expect(importStyle({ ...base, imports: ["./_utils", "./types", "pkg"] }).style).toBe("none");
  });

  it("never follows a style the workspace rejects", () => {
    // .ts imports without allowImportingTsExtensions would be TS5097: the resolution decides instead.
    expect(importStyle({ ...base, nodeResolution: true, esm: true, imports: ["./types.ts"] }).style).toBe("js");
    expect(importStyle({ ...base, imports: ["./types.ts"] }).style).toBe("none");
    // Node's ESM resolution requires a suffix: extensionless imports in the file are not copied.
    expect(importStyle({ ...base, nodeResolution: true, esm: true, imports: ["./a", "./b"] })).toEqual({
      style: "js",
      why: "Node ESM resolution (node16/nodenext) requires suffixes",
    });
  });

  it("without a relative import to follow: .js under nodenext ESM or in an ESM package, none otherwise", () => {
    expect(
      importStyle({ ...base, nodeResolution: true, esm: true, tsExtensions: true, imports: ["vitest"] }).style,
    ).toBe("js");
    expect(importStyle({ ...base, esm: true, imports: [] })).toEqual({
      style: "js",
      why: 'an ESM package ("type": "module")',
    });
    // A CommonJS package under nodenext compiles imports to require(): no suffix needed.
    expect(importStyle({ ...base, nodeResolution: true, imports: [] }).style).toBe("none");
    expect(importStyle({ ...base, imports: ["./data.json"] }).style).toBe("none");
  });
});

describe("importSuffix and testLocation", () => {
  it("spells the suffix of each source kind", () => {
    expect(["a.ts", "a.tsx", "a.mts", "a.cts", "a.d.ts", "a.js"].map((f) => importSuffix(f, "js"))).toEqual([
      ".js",
      ".js",
      ".mjs",
      ".cjs",
      ".js",
      ".js",
    ]);
    expect(["a.ts", "a.tsx", "a.mts", "a.d.ts"].map((f) => importSuffix(f, "ts"))).toEqual([
      ".ts",
      ".tsx",
      ".mts",
      ".js",
    ]);
    expect(importSuffix("a.ts", "none")).toBe("");
  });

  it("the test sits beside the source or mirrored under test/ (an ES module source keeps .mts), importing in the style", () => {
    expect(testLocation("src/hookable.ts", { mirrorUnderTest: false, style: "ts" })).toEqual({
      test_path: "src/hookable.test.ts",
      specifier: "./hookable.ts",
    });
    expect(testLocation("protocol/util/paths.ts", { mirrorUnderTest: true, style: "js" })).toEqual({
      test_path: "test/protocol/util/paths.test.ts",
      specifier: "../../../protocol/util/paths.js",
    });
    expect(testLocation("src/defu.ts", { mirrorUnderTest: false, style: "none" }).specifier).toBe("./defu");
    expect(testLocation("lib/y.cts", { mirrorUnderTest: false, style: "js" })).toEqual({
      test_path: "lib/y.test.ts",
      specifier: "./y.cjs",
    });
    expect(testLocation("lib/x.mts", { mirrorUnderTest: false, style: "js" })).toEqual({
      test_path: "lib/x.test.mts",
      specifier: "./x.mjs",
    });
  });
});
