/**
 * Identifier-aware tokens (camelCase, PascalCase acronyms, snake_case, kebab-case and digit runs
 * split; the whole identifier kept too), a light stemmer, and the code synonyms a query is widened
 * with (README "search"). Every function here is one left-to-right pass over its input: no regular
 * expression that can backtrack, so a hostile 1 MB identifier costs linear time.
 */

const STOP = new Set([
  "a",
  "an",
  "and",
  "are",
  "as",
  "at",
  "be",
  "by",
  "for",
  "from",
  "in",
  "is",
  "it",
  "of",
  "on",
  "or",
  "the",
  "this",
  "to",
  "with",
  "const",
  "let",
  "var",
  "return",
  "import",
  "export",
  "new",
]);

/** Character classes of the split: upper and lower ASCII letters, digits, and identifier characters that separate (`_`, `$`). */
const UPPER = 1;
const LOWER = 2;
const DIGIT = 3;
const SEPARATOR = 0;

function classOf(c: number): number {
  if (c >= 65 && c <= 90) return UPPER;
  if (c >= 97 && c <= 122) return LOWER;
  if (c >= 48 && c <= 57) return DIGIT;
  return SEPARATOR;
}

/**
 * Split one identifier into its words: `adaptivePoolGrow2` → adaptive, Pool, Grow, 2; `HTTPServer` →
 * HTTP, Server; `snake_case-name` → snake, case, name. A word ends before an upper-case letter that
 * follows a lower-case one, before the last capital of an acronym followed by a lower-case letter,
 * and where digits start or stop.
 */
export function splitIdentifier(id: string): string[] {
  const out: string[] = [];
  let start = -1;
  let prev = SEPARATOR;
  const n = id.length;
  for (let i = 0; i < n; i++) {
    const c = classOf(id.charCodeAt(i));
    if (c === SEPARATOR) {
      if (start !== -1) out.push(id.slice(start, i));
      start = -1;
    } else if (start === -1) {
      start = i;
    } else {
      const boundary =
        (prev === LOWER && c === UPPER) ||
        (prev !== DIGIT && c === DIGIT) ||
        (prev === DIGIT && c !== DIGIT) ||
        (prev === UPPER && c === UPPER && i + 1 < n && classOf(id.charCodeAt(i + 1)) === LOWER);
      if (boundary) {
        out.push(id.slice(start, i));
        start = i;
      }
    }
    prev = c;
  }
  if (start !== -1) out.push(id.slice(start));
  return out;
}

function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
}

function isIdentPart(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57);
}

/** Raw tokens of a text: identifiers (ASCII letters, digits, `_`, `$`) and digit runs, each followed by its parts when it has several. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isIdentStart(c)) {
      let j = i + 1;
      while (j < n && isIdentPart(text.charCodeAt(j))) j++;
      const word = text.slice(i, j);
      out.push(word);
      const parts = splitIdentifier(word);
      if (parts.length > 1) for (const p of parts) out.push(p);
      i = j;
    } else if (c >= 48 && c <= 57) {
      let j = i + 1;
      while (j < n && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
      out.push(text.slice(i, j));
      i = j;
    } else i++;
  }
  return out;
}

/** A light stemmer so "grows", "growing" and "grow" meet; short words are left alone. */
export function stem(word: string): string {
  if (word.length <= 4) return word;
  for (const suffix of ["ations", "ation", "ments", "ment", "ings", "ing", "ies", "ed", "es", "s"]) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) {
      const base = word.slice(0, -suffix.length);
      return suffix === "ies" ? `${base}y` : base;
    }
  }
  return word;
}

/** Normalise one token for the index and for queries; stop words and one-letter tokens are dropped. */
export function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (t.length < 2 || STOP.has(t)) return null;
  return stem(t);
}

/**
 * Words a developer uses for the same thing in code (README "search"): a query word from one group
 * also looks for the others. Kept small on purpose: each group is a common naming habit, not a thesaurus.
 */
export const SYNONYMS: readonly (readonly string[])[] = [
  ["strip", "remove", "without", "trim", "delete", "drop"],
  ["extension", "ext"],
  ["directory", "dir", "folder"],
  ["merge", "combine", "mix", "defaults"],
  ["uppercase", "upper", "capitalize", "capital"],
  ["lowercase", "lower"],
  ["parallel", "concurrent", "concurrently", "simultaneous"],
  ["serial", "sequential", "sequence", "sequentially"],
  ["error", "exception", "failure"],
  ["size", "length", "count", "bytes"],
  ["check", "validate", "verify", "guard"],
  ["options", "config", "settings", "configuration"],
  ["delay", "wait", "backoff", "timing"],
  ["debug", "debugger", "log", "trace"],
  ["create", "make", "build", "factory"],
  ["flatten", "flat"],
  ["split", "words", "tokens", "tokenize"],
  ["headers", "header"],
  ["progress", "download", "upload"],
  ["resolve", "lookup", "locate"],
  ["nest", "depth", "deep", "nesting"],
];

const SYNONYMS_BY_TERM: Map<string, readonly string[]> = (() => {
  const map = new Map<string, readonly string[]>();
  for (const group of SYNONYMS) for (const w of group) map.set(stem(w), group);
  return map;
})();

/** The query with each word's synonyms appended (their original words stay first). */
export function widenQuery(query: string): string {
  const extra: string[] = [];
  const seen = new Set<string>();
  for (const token of tokenize(query)) {
    const term = processTerm(token);
    if (term === null || seen.has(term)) continue;
    seen.add(term);
    const group = SYNONYMS_BY_TERM.get(term);
    if (group) for (const w of group) if (stem(w) !== term) extra.push(w);
  }
  return extra.length === 0 ? query : `${query} ${extra.join(" ")}`;
}
