/** What is being completed: the identifier prefix before the cursor, and for `x.` completions the receiver. */

export interface CompletionContext {
  /** The identifier characters typed so far. */
  prefix: string;
  /** Where the prefix starts. */
  start: number;
  /** For member completion (`a.b|`), the receiver expression text (`a`, `this`, `this.pool`). */
  receiver?: string;
}

const ID = /[A-Za-z0-9_$#]/;

function identifierStart(source: string, end: number): number {
  let i = end;
  while (i > 0 && ID.test(source[i - 1]!)) i--;
  return i;
}

/** Read the prefix and the receiver chain (identifiers joined by `.` or `?.`) before `offset`. */
export function completionContext(source: string, offset: number): CompletionContext {
  const start = identifierStart(source, offset);
  const prefix = source.slice(start, offset);
  let i = start;
  while (i > 0 && (source[i - 1] === " " || source[i - 1] === "\t")) i--;
  if (source[i - 1] !== "." || source[i - 2] === ".") return { prefix, start };
  let end = i - 1;
  if (source[end - 1] === "?") end--;
  // Walk back over `a.b?.c` (no calls or indexing: those need types we do not have).
  let chainStart = end;
  for (;;) {
    let j = chainStart;
    while (j > 0 && /\s/.test(source[j - 1]!)) j--;
    const s = identifierStart(source, j);
    if (s === j) break;
    chainStart = s;
    let k = s;
    while (k > 0 && /\s/.test(source[k - 1]!)) k--;
    if (source[k - 1] === "." && source[k - 2] !== ".") {
      chainStart = source[k - 2] === "?" ? k - 2 : k - 1;
      continue;
    }
    break;
  }
  const receiver = source.slice(chainStart, end).replace(/\s+/g, "").replace(/\?\./g, ".");
  if (receiver === "" || /^\d/.test(receiver)) return { prefix, start };
  return { prefix, start, receiver };
}
