/** Where the test goes and how it imports the code under test (docs/agents.md, "testgen"). */
import { posix } from "node:path";

export interface TestLocation {
  /** Suggested path of the test file, relative to the workspace root (or next to the source). */
  test_path: string;
  /** The import specifier from the test file to the source file. */
  specifier: string;
}

/**
 * How relative imports are spelled: with the emitted file's suffix (`./x.js`, NodeNext ESM), with the
 * source's own (`./x.ts`, `allowImportingTsExtensions`), or without one (bundlers, CommonJS).
 */
export type ImportStyle = "js" | "ts" | "none";

const EXT = /\.(m|c)?(ts|tsx|js|jsx)$/;

/** The suffix a relative import of `file` carries in `style` (a declaration file is imported by its `.js` name). */
export function importSuffix(file: string, style: ImportStyle): string {
  if (style === "none") return "";
  const decl = /\.d\.([cm]?)ts$/.exec(file);
  if (decl) return `.${decl[1]}js`;
  const m = /\.([cm]?)(ts|tsx|js|jsx)$/.exec(file);
  if (!m) return style === "ts" ? ".ts" : ".js";
  if (style === "ts") return m[0];
  return `.${m[1]}js`;
}

/**
 * Tests mirror the source tree under `test/` when the workspace has that folder (`protocol/x.ts` →
 * `test/protocol/x.test.ts`), else they sit beside the source; `.mts`/`.mjs` sources get `.test.mts`/`.test.mjs`
 * tests, others `.test.ts`/`.test.tsx`/`.test.js`/`.test.jsx`. The import is spelled in `style`.
 */
export function testLocation(
  sourcePath: string,
  options: { mirrorUnderTest: boolean; style: ImportStyle; testPath?: string },
): TestLocation {
  const src = sourcePath.split("\\").join("/");
  const m = EXT.exec(src);
  const ext = m ? m[0] : ".ts";
  const base = src.slice(0, src.length - ext.length);
  // An ES module source keeps an ES module test (a CommonJS `.ts` test could not import it under nodenext).
  const testExt = ext === ".mts" || ext === ".mjs" ? ext : ext.replace(/^\.(m|c)?/, ".");
  const test_path =
    options.testPath ??
    (options.mirrorUnderTest && !src.startsWith("test/") ? `test/${base}.test${testExt}` : `${base}.test${testExt}`);
  let rel = posix.relative(posix.dirname(test_path), base);
  if (!rel.startsWith(".")) rel = `./${rel}`;
  return { test_path, specifier: `${rel}${importSuffix(`${base}${ext}`, options.style)}` };
}

export interface StyleInput {
  /** The import specifiers of the file under test (package ones are ignored). */
  imports: string[];
  /** The workspace resolves like Node's ESM loader (`moduleResolution` node16 / nodenext). */
  nodeResolution: boolean;
  /** `allowImportingTsExtensions` or `rewriteRelativeImportExtensions` is on. */
  tsExtensions: boolean;
  /** The test file is an ES module to Node (`"type": "module"`, or a `.mts` / `.mjs` test). */
  esm: boolean;
}

/**
 * The style the workspace resolves, following the file under test where it shows one: the most used
 * among its relative imports, unless the workspace rejects it (`.ts` without `allowImportingTsExtensions`;
 * no suffix where Node's ESM resolution requires one). Without such an import: `.js` under Node ESM
 * resolution or in an ESM package, none otherwise. `why` says what decided.
 */
export function importStyle(input: StyleInput): { style: ImportStyle; why: string } {
  const counts: Record<ImportStyle, number> = { js: 0, ts: 0, none: 0 };
  for (const s of input.imports) {
    if (!s.startsWith("./") && !s.startsWith("../") && s !== "." && s !== "..") continue;
    if (/\.json$/.test(s)) continue;
    if (/\.d\.[cm]?ts$/.test(s)) counts.js++;
    else if (/\.[cm]?tsx?$/.test(s)) counts.ts++;
    else if (/\.[cm]?jsx?$/.test(s)) counts.js++;
    else counts.none++;
  }
  const suffixRequired = input.nodeResolution && input.esm;
  const allowed = (s: ImportStyle): boolean => s === "js" || (s === "ts" ? input.tsExtensions : !suffixRequired);
  const seen = (["ts", "js", "none"] as const)
    .filter((s) => counts[s] > 0 && allowed(s))
    .sort((a, b) => counts[b] - counts[a]);
  if (seen.length > 0) return { style: seen[0]!, why: "the file's own relative imports" };
  if (suffixRequired) return { style: "js", why: "Node ESM resolution (node16/nodenext) requires suffixes" };
  if (input.esm) return { style: "js", why: 'an ESM package ("type": "module")' };
  return { style: "none", why: "no suffix required" };
}
