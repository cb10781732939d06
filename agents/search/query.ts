/** Running a query against a workspace index: filters (languages, path globs), definition boost, snippets. */
import { extname } from "node:path";
import picomatch from "picomatch";
import { FIELD_BOOST, type Doc, type WorkspaceIndex } from "./workspace-index.js";
import { processTerm, queryGroups, tokenize } from "./tokenize.js";

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
/** Results fetched per result returned, so weighing prose and tests down can bring code up from below the limit. */
const OVERFETCH = 3;
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

export interface Hit {
  path: string;
  line_start: number;
  line_end: number;
  symbol: string | null;
  kind: Doc["kind"];
  score: number;
  snippet: string;
}

export interface QueryOptions {
  limit: number;
  globs?: string[];
  languages?: string[];
}

const EXT_BY_LANGUAGE: Record<string, string[]> = {
  typescript: [".ts", ".tsx", ".mts", ".cts"],
  typescriptreact: [".tsx"],
  javascript: [".js", ".jsx", ".mjs", ".cjs"],
  javascriptreact: [".jsx"],
  markdown: [".md", ".markdown"],
  text: [".txt"],
};

/** Up to three lines of the chunk around the first line that mentions a query term. */
function snippetOf(doc: Doc, terms: string[]): string {
  const lines = doc.text.split("\n");
  let best = lines.findIndex(
    (l) =>
      l.trim() !== "" &&
      !l.trim().startsWith("*") &&
      !l.trim().startsWith("/*") &&
      terms.some((t) => l.toLowerCase().includes(t)),
  );
  if (best === -1) best = lines.findIndex((l) => terms.some((t) => l.toLowerCase().includes(t)));
  if (best === -1) best = 0;
  return lines
    .slice(Math.max(0, best - 1), best + 2)
    .map((l) => (l.length > 200 ? `${l.slice(0, 199)}…` : l))
    .join("\n")
    .trim();
}

/** The ranked hits for `query`. */
export function runQuery(index: WorkspaceIndex, query: string, options: QueryOptions): Hit[] {
  const globMatch =
    options.globs && options.globs.length > 0 ? picomatch(options.globs, { dot: true, noextglob: true }) : undefined;
  const exts = options.languages?.flatMap((l) => EXT_BY_LANGUAGE[l.toLowerCase()] ?? []);
  const extSet = exts && exts.length > 0 ? new Set(exts) : undefined;
  // Definitions outrank mentions through the `symbol` field's boost (only definition chunks have one).
  // No prefix or fuzzy expansion: stemming covers word forms, and every expansion adds postings to score.
  // Each query word with its code synonyms (tokenize.ts); prose and tests are fetched deeper and weighed down below.
  const results = index.search.searchGroups(queryGroups(query), {
    boost: FIELD_BOOST,
    limit: options.limit * OVERFETCH,
    ...(globMatch || extSet
      ? {
          filter: (id: number) => {
            const doc = index.docs.get(id);
            if (!doc) return false;
            if (globMatch && !globMatch(doc.path)) return false;
            return !extSet || extSet.has(extname(doc.path).toLowerCase());
          },
        }
      : {}),
  });
  const raw = tokenize(query)
    .map((t) => t.toLowerCase())
    .filter((t) => processTerm(t) !== null);
  const terms = raw.length > 0 ? raw : [query.toLowerCase()];
  const weighed = results.map((r) => ({
    id: r.id,
    score: r.score * pathWeight(index.docs.get(r.id)!.path),
  }));
  weighed.sort((a, b) => b.score - a.score || a.id - b.id);
  return weighed.slice(0, options.limit).map((r) => {
    const doc = index.docs.get(r.id)!;
    return {
      path: doc.path,
      line_start: doc.line_start,
      line_end: doc.line_end,
      symbol: doc.symbol ?? null,
      kind: doc.kind,
      score: Math.round(r.score * 1000) / 1000,
      snippet: snippetOf(doc, terms),
    };
  });
}
