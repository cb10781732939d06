/**
 * The code context around the cursor, cut into what is kept whole (the enclosing function and the
 * cursor neighbourhood) and what may be trimmed (farther code, farthest lines first).
 */
import type { FunctionSlice } from "../code/cursor.js";

/** Lines before/after the cursor kept whole (before: outside a function only). */
const NEAR_BEFORE = 6;
const NEAR_AFTER = 3;
/** Outside a function the kept region starts on a multiple of this many lines. */
const NEAR_QUANTUM = 8;
/** The trimmed prefix starts on a multiple of this many lines, so nearby cursors share a byte-identical prompt prefix (KV reuse). */
const PREFIX_QUANTUM = 16;

export interface CodeContext {
  /** Whole lines before the kept region (trimmable from the top). */
  outerBefore: string[];
  /** From the kept region's first line to the cursor. */
  keptBefore: string;
  /** From the cursor to the kept region's last line. */
  keptAfter: string;
  /** Whole lines after the kept region (trimmable from the bottom). */
  outerAfter: string[];
  /** 1-based line where the kept region starts. */
  keptStartLine: number;
}

function lineStartOf(source: string, offset: number): number {
  return source.lastIndexOf("\n", offset - 1) + 1;
}

function lineEndOf(source: string, offset: number): number {
  const nl = source.indexOf("\n", offset);
  return nl === -1 ? source.length : nl + 1;
}

function moveLines(source: string, offset: number, n: number): number {
  let at = offset;
  for (let i = 0; i < n && at < source.length; i++) at = lineEndOf(source, at);
  return at;
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/(?<=\n)/);
  return lines;
}

/** Cut the source at `offset` into kept and trimmable parts. */
export function codeContext(source: string, offset: number, fn: FunctionSlice | undefined): CodeContext {
  // The kept region starts where the enclosing function starts (or on a quantum line boundary outside
  // a function), so every cursor in the same function shares the prompt prefix before it (KV reuse).
  let start: number;
  let end = moveLines(source, offset, NEAR_AFTER);
  if (fn) {
    start = lineStartOf(source, fn.range[0]);
    end = Math.max(end, lineEndOf(source, fn.range[1]));
  } else {
    const cursorLine = source.slice(0, offset).split("\n").length;
    const startLine = Math.max(1, Math.floor((cursorLine - NEAR_BEFORE - 1) / NEAR_QUANTUM) * NEAR_QUANTUM + 1);
    start = moveLines(source, 0, startLine - 1);
  }
  const keptStartLine = source.slice(0, start).split("\n").length;
  return { outerBefore: splitLines(source.slice(0, start)), keptBefore: source.slice(start, offset), keptAfter: source.slice(offset, end), outerAfter: splitLines(source.slice(end)), keptStartLine };
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
      const n = count(ctx.outerBefore[b - 1]!);
      if (n > left) beforeOpen = false;
      else {
        left -= n;
        beforeTokens += n;
        b--;
        if (b === 0) beforeOpen = false;
      }
    } else {
      const n = count(ctx.outerAfter[a]!);
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
    for (let i = b; i < rounded; i++) beforeTokens -= count(ctx.outerBefore[i]!);
    b = rounded;
  }
  return { beforeFrom: b, afterCount: a, beforeTokens, afterTokens };
}
