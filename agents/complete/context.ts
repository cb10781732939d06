/**
 * The code context around the cursor, cut into what is kept whole (the enclosing function and the
 * cursor neighbourhood) and what may be trimmed (farther code, farthest lines first).
 */
import type { FunctionSlice } from "../lib/code/cursor.js";
import { positionAt } from "../lib/code/position.js";

/** Lines before/after the cursor kept whole (before: outside a function only). */
const NEAR_BEFORE = 6;
const NEAR_AFTER = 3;
/** Outside a function the kept region starts on a multiple of this many lines. */
const NEAR_QUANTUM = 8;
/** The trimmed prefix starts on a multiple of this many lines, so nearby cursors share a byte-identical prompt prefix (KV reuse). */
const PREFIX_QUANTUM = 16;

/**
 * Farther code is tokenised in chunks cut at file lines that are multiples of this (ModelHost.tokenizeStable
 * remembers each chunk): the chunks of the code before and after the cursor are the same texts wherever
 * the cursor is, so the buffer can be tokenised ahead in idle time (prewarm.ts) and a cursor jump finds them.
 */
export const CHUNK_LINES = PREFIX_QUANTUM;

/**
 * Whole lines of the source, read on demand: a 2,000-line file is not split into an array on every
 * keystroke when the budget only ever reads the lines nearest the cursor.
 */
export class Lines {
  constructor(
    private readonly source: string,
    /** Offset of each line's start in `source`. */
    private readonly starts: readonly number[],
    /** First line (0-based) and the offset where the view ends. */
    private readonly first: number,
    readonly length: number,
    private readonly end: number,
  ) {}

  /** Line `i` of the view, with its newline. */
  at(i: number): string {
    const k = this.first + i;
    return this.source.slice(
      this.starts[k],
      k + 1 < this.starts.length ? Math.min(this.starts[k + 1]!, this.end) : this.end,
    );
  }

  /** Lines `from` (inclusive) to `to` (exclusive) joined. */
  text(from: number, to = this.length): string {
    if (to <= from) return "";
    const k = this.first + to;
    return this.source.slice(
      this.starts[this.first + from],
      k < this.starts.length ? Math.min(this.starts[k]!, this.end) : this.end,
    );
  }

  /** Lines `from` to `to` (exclusive) as texts cut where the file's line number is a multiple of CHUNK_LINES (joined, they are `text(from, to)`). */
  chunks(from: number, to = this.length): string[] {
    const out: string[] = [];
    for (let i = from; i < to;) {
      const next = Math.min(to, (Math.floor((this.first + i) / CHUNK_LINES) + 1) * CHUNK_LINES - this.first);
      out.push(this.text(i, next));
      i = next;
    }
    return out;
  }
}

/** The text of every whole chunk of the file (what Lines.chunks gives for the code around any cursor), with the lines in it. */
export function* fileChunks(source: string, starts: readonly number[]): Generator<{ text: string; lines: number }> {
  for (let k = 0; k < starts.length; k += CHUNK_LINES) {
    const end = k + CHUNK_LINES < starts.length ? starts[k + CHUNK_LINES]! : source.length;
    if (end > starts[k]!) yield { text: source.slice(starts[k], end), lines: Math.min(CHUNK_LINES, starts.length - k) };
  }
}

export interface CodeContext {
  /** Whole lines before the kept region (trimmable from the top). */
  outerBefore: Lines;
  /** From the kept region's first line to the cursor. */
  keptBefore: string;
  /** From the cursor to the kept region's last line. */
  keptAfter: string;
  /** Whole lines after the kept region (trimmable from the bottom). */
  outerAfter: Lines;
  /** 1-based line where the kept region starts. */
  keptStartLine: number;
}

/** The 0-based line containing `offset`. */
function line0(starts: readonly number[], offset: number): number {
  return positionAt(offset, starts).line - 1;
}

/** Cut the source at `offset` into kept and trimmable parts (`starts`: the offset of each line). */
export function codeContext(
  source: string,
  offset: number,
  fn: FunctionSlice | undefined,
  starts: readonly number[],
): CodeContext {
  // The kept region starts where the enclosing function starts (or on a quantum line boundary outside
  // a function), so every cursor in the same function shares the prompt prefix before it (KV reuse).
  const cursorLine = line0(starts, offset);
  // Lines that hold text: a source ending with a newline has no line after it.
  const lines = starts.length > 1 && starts[starts.length - 1] === source.length ? starts.length - 1 : starts.length;
  const lineStart = (line: number): number => (line < lines ? starts[line]! : source.length);
  let startLine: number;
  let endLine = cursorLine + NEAR_AFTER; // exclusive
  if (fn) {
    startLine = line0(starts, fn.range[0]);
    endLine = Math.max(endLine, line0(starts, fn.range[1]) + 1);
  } else {
    startLine = Math.max(0, Math.floor((cursorLine - NEAR_BEFORE) / NEAR_QUANTUM) * NEAR_QUANTUM);
  }
  endLine = Math.min(endLine, lines);
  const start = lineStart(startLine);
  const end = lineStart(endLine);
  const afterCount = lines - endLine;
  return {
    outerBefore: new Lines(source, starts, 0, startLine, start),
    keptBefore: source.slice(start, offset),
    keptAfter: source.slice(offset, end),
    outerAfter: new Lines(source, starts, endLine, afterCount, source.length),
    keptStartLine: startLine + 1,
  };
}

export interface Fill {
  /** First included line of outerBefore (lines before it are trimmed). */
  beforeFrom: number;
  /** Lines of outerAfter included (the rest trimmed). */
  afterCount: number;
  beforeTokens: number;
  afterTokens: number;
}

/**
 * Fill `budget` tokens with outer lines, nearest to the cursor first, on both sides (the suffix only
 * when `withAfter`); the prefix start is then rounded down to a quantum so the prompt prefix is stable.
 */
export function fillOuter(ctx: CodeContext, budget: number, count: (text: string) => number, withAfter: boolean): Fill {
  let b = ctx.outerBefore.length; // next candidate is b - 1
  let a = 0;
  let left = budget;
  let beforeTokens = 0;
  let afterTokens = 0;
  let beforeOpen = b > 0;
  let afterOpen = withAfter && ctx.outerAfter.length > 0;
  while ((beforeOpen || afterOpen) && left > 0) {
    const distBefore = ctx.outerBefore.length - b + 1;
    const distAfter = a + 1;
    const takeBefore = beforeOpen && (!afterOpen || distBefore <= distAfter * 2);
    if (takeBefore) {
      const n = count(ctx.outerBefore.at(b - 1));
      if (n > left) beforeOpen = false;
      else {
        left -= n;
        beforeTokens += n;
        b--;
        if (b === 0) beforeOpen = false;
      }
    } else {
      const n = count(ctx.outerAfter.at(a));
      if (n > left) afterOpen = false;
      else {
        left -= n;
        afterTokens += n;
        a++;
        if (a === ctx.outerAfter.length) afterOpen = false;
      }
    }
  }
  if (b > 0) {
    // Round the start up to the next quantum boundary (drops a few more lines, keeps prefixes byte-stable).
    const rounded = Math.min(ctx.outerBefore.length, Math.ceil(b / PREFIX_QUANTUM) * PREFIX_QUANTUM);
    for (let i = b; i < rounded; i++) beforeTokens -= count(ctx.outerBefore.at(i));
    b = rounded;
  }
  return { beforeFrom: b, afterCount: a, beforeTokens, afterTokens };
}
