/** Identifier-aware tokens: camelCase, snake_case, kebab-case and digit runs split; the whole identifier kept too. */

const STOP = new Set(["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on", "or", "the", "this", "to", "with", "const", "let", "var", "return", "import", "export", "new"]);

/** Split one identifier into its words: `adaptivePoolGrow2` → adaptive, pool, grow, 2; `HTTPServer` → http, server. */
export function splitIdentifier(id: string): string[] {
  return id
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    // One capital and a lookahead: linear. `([A-Z]+)([A-Z][a-z])` backtracked over every capital run (quadratic).
    .replace(/([A-Z])(?=[A-Z][a-z])/g, "$1 ")
    .replace(/([A-Za-z])(\d)/g, "$1 $2")
    .replace(/(\d)([A-Za-z])/g, "$1 $2")
    .split(/[\s_\-$]+/)
    .filter((w) => w.length > 0);
}

/** Raw tokens of a text: identifiers and words, each followed by its parts when it has several. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/[A-Za-z_$][A-Za-z0-9_$]*|\d+/g)) {
    const word = m[0];
    out.push(word);
    const parts = splitIdentifier(word);
    if (parts.length > 1) out.push(...parts);
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
