/** Cursor positions ↔ offsets. Lines are 1-based, columns 0-based (ESTree `loc`). */
import { AipError } from "../../../protocol/contract/errors.js";

export interface Position {
  line: number;
  column: number;
}

/** Offsets at which each line starts. */
export function lineStarts(source: string): number[] {
  const starts = [0];
  for (let i = source.indexOf("\n"); i !== -1; i = source.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

/** Block sizes for comparing long strings: whole blocks compare as substrings (memcmp), the last block by characters. */
const BLOCKS = [4096, 256, 16];

/** Length of the common prefix of `a` and `b`. */
export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  for (const size of BLOCKS) while (i + size <= n && a.slice(i, i + size) === b.slice(i, i + size)) i += size;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Length of the common suffix of `a` and `b`, at most `max`. */
export function commonSuffix(a: string, b: string, max: number): number {
  let i = 0;
  for (const size of BLOCKS)
    while (i + size <= max && a.slice(a.length - i - size, a.length - i) === b.slice(b.length - i - size, b.length - i))
      i += size;
  while (i < max && a.charCodeAt(a.length - 1 - i) === b.charCodeAt(b.length - 1 - i)) i++;
  return i;
}

/** The edit that turns `a` into `b`: one changed range (the common prefix and suffix kept). */
export function changeOf(a: string, b: string): { start: number; oldEnd: number; newEnd: number } {
  const start = commonPrefix(a, b);
  const tail = commonSuffix(a, b, Math.min(a.length, b.length) - start);
  return { start, oldEnd: a.length - tail, newEnd: b.length - tail };
}

/**
 * `lineStarts` of the buffers an editor sends keystroke after keystroke: the new starts are the old
 * ones before the edit, the edit's own, and the old ones after it moved (a prefix/suffix compare and a
 * copy instead of scanning the whole buffer on every keystroke).
 */
export class LineStartsCache {
  private last: { source: string; starts: readonly number[] } | undefined;

  /** The line starts of `source` (do not mutate the array: it is kept for the next call). */
  get(source: string): readonly number[] {
    const last = this.last;
    if (last?.source === source) return last.starts;
    const starts = last ? movedStarts(last.source, last.starts, source) : lineStarts(source);
    this.last = { source, starts };
    return starts;
  }
}

/** The line starts of `source` from those of `old`, the buffer it was edited from. */
export function movedStarts(old: string, prev: readonly number[], source: string): number[] {
  const prefix = commonPrefix(old, source);
  const suffix = commonSuffix(old, source, Math.min(old.length, source.length) - prefix);
  const newEnd = source.length - suffix;
  const delta = source.length - old.length;
  // A start s follows a "\n" at s - 1: kept when that is in the common prefix, moved when in the common suffix.
  const starts = prev.slice(0, firstAbove(prev, prefix));
  for (let i = source.indexOf("\n", prefix); i !== -1 && i < newEnd; i = source.indexOf("\n", i + 1))
    starts.push(i + 1);
  for (let k = firstAbove(prev, old.length - suffix); k < prev.length; k++) starts.push(prev[k]! + delta);
  return starts;
}

/** The first index in `[0, n)` for which `past(i)` holds, `past` being false and then true along it (binary search). */
export function firstPast(n: number, past: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (past(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The first index whose value is above `x` (values ascending). */
export function firstAbove(values: readonly number[], x: number): number {
  return firstPast(values.length, (k) => values[k]! > x);
}

/** The offset of a cursor; a column past the end of its line is clamped to the line end. */
export function offsetAt(source: string, cursor: Position, starts: readonly number[] = lineStarts(source)): number {
  if (cursor.line > starts.length) {
    throw new AipError(
      "AIP_ERR_INVALID_FIELD",
      `context.cursor.line: the source has ${starts.length} lines, got line ${cursor.line}`,
      {
        extensions: { errors: [{ path: "context.cursor.line", message: `expected at most ${starts.length}` }] },
      },
    );
  }
  const start = starts[cursor.line - 1]!;
  const next = cursor.line < starts.length ? starts[cursor.line]! - 1 : source.length;
  return Math.min(start + cursor.column, next);
}

/** The cursor at an offset. */
export function positionAt(offset: number, starts: readonly number[]): Position {
  const line = Math.max(0, firstAbove(starts, offset) - 1);
  return { line: line + 1, column: offset - starts[line]! };
}

/** The 1-based line of `offset` (counting "\n"), without building a table of line starts. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/** The position just after `text` when `text` starts at `at` (what a parser reports, for "\n" line ends). */
export function positionAfter(at: Position, text: string): Position {
  let lines = 0;
  let last = -1;
  for (let k = text.indexOf("\n"); k !== -1; k = text.indexOf("\n", k + 1)) {
    lines++;
    last = k;
  }
  return lines === 0
    ? { line: at.line, column: at.column + text.length }
    : { line: at.line + lines, column: text.length - last - 1 };
}
