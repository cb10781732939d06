/** Where the test goes and how it imports the code under test. */
import { posix } from "node:path";

export interface TestLocation {
  /** Suggested path of the test file, relative to the workspace root (or next to the source). */
  test_path: string;
  /** The import specifier from the test file to the source file. */
  specifier: string;
}

const EXT = /\.(m|c)?(ts|tsx|js|jsx)$/;

/**
 * Tests mirror the source tree under `test/` when the workspace has that folder (`protocol/x.ts` →
 * `test/protocol/x.test.ts`), else they sit beside the source. The import keeps the project's style:
 * `.js` suffixes when the source's own relative imports use them (NodeNext ESM), none otherwise.
 */
export function testLocation(
  sourcePath: string,
  options: { mirrorUnderTest: boolean; jsSuffix: boolean; testPath?: string },
): TestLocation {
  const src = sourcePath.split("\\").join("/");
  const m = EXT.exec(src);
  const ext = m ? m[0] : ".ts";
  const base = src.slice(0, src.length - ext.length);
  const testExt = ext.replace(/^\.(m|c)?/, ".");
  const test_path =
    options.testPath ??
    (options.mirrorUnderTest && !src.startsWith("test/") ? `test/${base}.test${testExt}` : `${base}.test${testExt}`);
  let rel = posix.relative(posix.dirname(test_path), base);
  if (!rel.startsWith(".")) rel = `./${rel}`;
  const suffix = options.jsSuffix
    ? ext === ".mts"
      ? ".mjs"
      : ext === ".cts"
        ? ".cjs"
        : ext.endsWith("x")
          ? ".js"
          : ext.replace("ts", "js")
    : "";
  return { test_path, specifier: `${rel}${suffix}` };
}

/** True when the source's relative imports carry `.js`-style suffixes; undefined when it has none to judge by. */
export function usesJsSuffix(importSources: string[]): boolean | undefined {
  const rel = importSources.filter((s) => s.startsWith("."));
  if (rel.length === 0) return undefined;
  return rel.filter((s) => /\.(m|c)?js$/.test(s)).length * 2 >= rel.length;
}
