/** Cursor positions ↔ offsets. Lines are 1-based, columns 0-based (ESTree `loc`). */
import { AipError } from "../../protocol/errors.js";

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

/** The offset of a cursor; a column past the end of its line is clamped to the line end. */
export function offsetAt(source: string, cursor: Position, starts = lineStarts(source)): number {
  if (cursor.line > starts.length) {
    throw new AipError("AIP_ERR_INVALID_FIELD", `context.cursor.line: the source has ${starts.length} lines, got line ${cursor.line}`, {
      extensions: { errors: [{ path: "context.cursor.line", message: `expected at most ${starts.length}` }] },
    });
  }
  const start = starts[cursor.line - 1]!;
  const next = cursor.line < starts.length ? starts[cursor.line]! - 1 : source.length;
  return Math.min(start + cursor.column, next);
}

/** The cursor at an offset. */
export function positionAt(offset: number, starts: readonly number[]): Position {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - starts[lo]! };
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
  return lines === 0 ? { line: at.line, column: at.column + text.length } : { line: at.line + lines, column: text.length - last - 1 };
}
