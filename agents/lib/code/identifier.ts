/**
 * An identifier split into its words, in one left-to-right pass with no regular expression that can
 * backtrack: a hostile 1 MB identifier costs linear time. Used by search's tokenizer and by member
 * ranking's name likeness (docs/agents.md).
 */

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
