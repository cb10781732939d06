/** Running a query against a workspace index: filters (languages, path globs), definition boost, snippets. */
import { extname } from "node:path";
import picomatch from "picomatch";
import { FIELD_BOOST, FIELD_COORDINATION, type Doc, type WorkspaceIndex } from "./workspace-index.js";
import { processTerm, queryGroups, tokenize } from "./tokenize.js";
import { queryRoles, roleFactor, signatureRoles, type Roles } from "./roles.js";

export { INTERNAL_WEIGHT, PROSE_WEIGHT, TEST_WEIGHT, isTestPath, pathWeight } from "./weights.js";
/** How many of the best results signature roles re-rank (`roles.ts`): siblings that already matched the words. */
const ROLE_RERANK = 20;
/** Kinds whose head may declare a parameter list (a property's or const's function type included). */
/** A definition's signature roles, parsed once per chunk (a re-indexed file brings new `Doc` objects). */
const SIGNATURES = new WeakMap<Doc, Roles | null>();
const ROLE_KINDS = new Set<Doc["kind"]>(["function", "method", "const", "property"]);
/**
 * Word order (docs/agents.md "search"): among the best results, a definition whose head says the query's
 * words in the query's order (adjacent pairs of its terms, stop words aside) is multiplied by up to
 * 1 + this. Words that match in any order are BM25's; a description saying the phrase is stronger evidence.
 */
export const PHRASE_WEIGHT = 0.5;
/** A definition's head as adjacent index-term pairs, computed once per chunk. */
const HEAD_PAIRS = new WeakMap<Doc, Set<string>>();
/**
 * Compound identifiers (`FirstLetterCase`, `first_letter`) split the head and give no pairs themselves:
 * a name is BM25's evidence already, and only prose saying the words in order is a phrase.
 */
const COMPOUND = /[A-Za-z0-9]*(?:[a-z0-9][A-Z]|_)[A-Za-z0-9_]*/;

function headPairs(head: string): Set<string> {
  const have = new Set<string>();
  for (const part of head.split(COMPOUND)) {
    const terms = termsOf(part);
    for (let i = 1; i < terms.length; i++) have.add(`${terms[i - 1]} ${terms[i]}`);
  }
  return have;
}

function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const t of tokenize(text)) {
    const p = processTerm(t);
    if (p !== null) out.push(p);
  }
  return out;
}

/** The share of the query's adjacent term pairs that `doc`'s head has adjacent, in the same order. */
function phraseShare(doc: Doc, pairs: readonly string[]): number {
  if (doc.head === undefined) return 0;
  let have = HEAD_PAIRS.get(doc);
  if (have === undefined) HEAD_PAIRS.set(doc, (have = headPairs(doc.head)));
  return pairs.filter((p) => have.has(p)).length / pairs.length;
}

/** Results fetched per result returned, so weighing prose and tests down can bring code up from below the limit. */
const OVERFETCH = 3;

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
  python: [".py", ".pyi"],
  markdown: [".md", ".markdown"],
  text: [".txt"],
};

/**
 * The code names a Markdown heading is about: the identifiers it marks as code (in backticks, called
 * `name(`, a member `a.name`), or the heading itself when it is one identifier. "Custom Merger" names
 * nothing; "`mergeHeaders(a, b)`" and "ky.extend(options)" name `mergeHeaders` and `extend`. One pass.
 */
export function headingNames(heading: string): string[] {
  const out: string[] = [];
  const text = heading.trim();
  const n = text.length;
  let inCode = false;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 96 /* ` */) {
      inCode = !inCode;
      i++;
    } else if (isIdentChar(c) && !(c >= 48 && c <= 57)) {
      let j = i + 1;
      while (j < n && isIdentChar(text.charCodeAt(j))) j++;
      const name = text.slice(i, j);
      if (inCode || text[j] === "(" || text[i - 1] === "." || (i === 0 && j === n)) out.push(name);
      i = j;
    } else i++;
  }
  return out;
}

function isIdentChar(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 36;
}

/** Up to three lines of the chunk around the first line that mentions a query term. */
function snippetOf(doc: Doc, terms: string[]): string {
  const lines = doc.text.split("\n");
  const mentions = (line: string): boolean => {
    const lower = line.toLowerCase();
    return terms.some((t) => lower.includes(t));
  };
  let best = lines.findIndex((l) => {
    const t = l.trim();
    return t !== "" && !t.startsWith("*") && !t.startsWith("/*") && mentions(l);
  });
  if (best === -1) best = lines.findIndex(mentions);
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
    coordination: FIELD_COORDINATION,
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
    score: r.score * index.docs.get(r.id)!.weight,
  }));
  weighed.sort((a, b) => b.score - a.score || a.id - b.id);
  const qTerms = termsOf(query);
  const pairs = [...new Set(qTerms.slice(1).map((t, i) => `${qTerms[i]} ${t}`))];
  const roles = weighed.length > 1 ? queryRoles(query) : undefined;
  if (pairs.length > 0) {
    const top = weighed.slice(0, ROLE_RERANK);
    for (const r of top) {
      const doc = index.docs.get(r.id)!;
      // A type's description names what a value is; the phrase is evidence for what code does or says.
      if (doc.kind === "type") continue;
      r.score *= 1 + PHRASE_WEIGHT * phraseShare(doc, pairs);
    }
    top.sort((a, b) => b.score - a.score || a.id - b.id);
    weighed.splice(0, top.length, ...top);
  }
  if (roles) {
    const top = weighed.slice(0, ROLE_RERANK);
    for (const r of top) {
      const doc = index.docs.get(r.id)!;
      if (doc.symbol === undefined || doc.head === undefined) continue;
      if (!ROLE_KINDS.has(doc.kind)) continue;
      let sig = SIGNATURES.get(doc);
      if (sig === undefined) SIGNATURES.set(doc, (sig = signatureRoles(doc.symbol, doc.head) ?? null));
      if (sig) r.score *= roleFactor(roles, sig);
    }
    top.sort((a, b) => b.score - a.score || a.id - b.id);
    weighed.splice(0, top.length, ...top);
  }
  // Duplicates collapse to the definition: a prose heading naming a code symbol that is among the results.
  const defined = new Set<string>();
  for (const r of weighed) {
    const doc = index.docs.get(r.id)!;
    if (doc.symbol !== undefined && doc.kind !== "heading" && doc.kind !== "module") defined.add(doc.symbol);
  }
  const kept = weighed.filter((r) => {
    const doc = index.docs.get(r.id)!;
    return doc.kind !== "heading" || !headingNames(doc.symbol ?? "").some((name) => defined.has(name));
  });
  return kept.slice(0, options.limit).map((r) => {
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
