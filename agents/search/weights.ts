/** How much of its BM25 score a chunk keeps, by where it is (docs/agents.md "search"); computed once per chunk at index time. */
import { extname } from "node:path";

/**
 * Symbols rank above prose that repeats them (docs/agents.md "search"): a chunk of a Markdown or text file
 * scores this share of its BM25 score, so a README heading copied from a JSDoc does not beat the function.
 */
export const PROSE_WEIGHT = 0.5;
/**
 * Definitions rank above the tests that exercise them: a chunk of a test file (under `test/`, `tests/`,
 * `__tests__/`, `spec/`, or named `*.test.*` / `*.spec.*`) scores this share. Tests repeat a symbol's
 * name and words around every call and define callbacks named like the options they test.
 */
export const TEST_WEIGHT = 0.5;
/**
 * A file's API above its internals: a top-level definition that its file does not export, in a file that
 * exports something, scores this share (`Chunk.exported`). The exported wrapper (`deepMerge`) outranks the
 * internal function doing the work (`deepMergeInternal`), which mentions more of the words.
 */
export const INTERNAL_WEIGHT = 0.8;
const PROSE_EXTENSIONS = new Set([".md", ".markdown", ".txt", ".rst"]);
const TEST_DIRS = new Set(["test", "tests", "__tests__", "spec", "specs"]);

function isProse(path: string): boolean {
  return PROSE_EXTENSIONS.has(extname(path).toLowerCase());
}

/** A test file by the usual conventions (directories and `.test.` / `.spec.` names). */
export function isTestPath(path: string): boolean {
  const parts = path.split("/");
  const name = parts[parts.length - 1]!;
  return parts.slice(0, -1).some((p) => TEST_DIRS.has(p)) || /\.(test|spec)\.[cm]?[jt]sx?$/.test(name);
}

/** The share of its BM25 score a chunk of this file keeps. */
export function pathWeight(path: string): number {
  return isProse(path) ? PROSE_WEIGHT : isTestPath(path) ? TEST_WEIGHT : 1;
}
