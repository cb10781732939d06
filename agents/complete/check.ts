/** The syntax check: splice the completion into the buffer; the touched top-level region must parse and prettier must format it. */
import { format } from "prettier";
import { isAipError } from "../../protocol/errors.js";
import { statementAt } from "../code/cursor.js";
import type { Dialect } from "../code/language.js";
import { parseProgram, type ParsedFile } from "../code/parse.js";

export interface CheckResult {
  ok: boolean;
  parsed: boolean;
  formatted: boolean;
  error?: string;
  /** How far into the completion the parser got (for ranking best-effort candidates). */
  score: number;
  /** Characters parsed: the region (fast path) or the whole buffer. */
  checked_chars: number;
}

/** The span of top-level statements around `offset`, from the end of the previous statement to the start of the next. */
function regionAround(file: ParsedFile, offset: number): [number, number] {
  const body = file.program.body;
  const { before: prev, after: next } = statementAt(body, offset);
  return [prev >= 0 ? body[prev]!.range[1] : 0, next < body.length ? body[next]!.range[0] : file.source.length];
}

/**
 * Check `completion` inserted at `offset`. With a parse of the original buffer only the touched region
 * is re-parsed (the rest is unchanged and parsed before); otherwise the whole spliced buffer is.
 */
export async function checkSplice(source: string, offset: number, completion: string, dialect: Dialect, original: ParsedFile | undefined): Promise<CheckResult> {
  let text: string;
  let base: number;
  if (original) {
    const [r0, r1] = regionAround(original, offset);
    text = source.slice(r0, offset) + completion + source.slice(offset, r1);
    base = offset - r0;
  } else {
    text = source.slice(0, offset) + completion + source.slice(offset);
    base = offset;
  }
  try {
    parseProgram(text, dialect);
  } catch (err) {
    const at = isAipError(err) ? Number((err.extensions as { line?: number }).line ?? 0) : 0;
    const msg = (err as Error).message;
    // Rank by how far past the cursor the parser got, in lines (a later error = a better candidate).
    const cursorLine = text.slice(0, base).split("\n").length;
    return { ok: false, parsed: false, formatted: false, error: msg, score: at - cursorLine, checked_chars: text.length };
  }
  try {
    await format(text, { parser: dialect.language === "typescript" ? "typescript" : "babel" });
  } catch (err) {
    return { ok: false, parsed: true, formatted: false, error: `prettier: ${(err as Error).message.split("\n")[0]}`, score: 1_000_000, checked_chars: text.length };
  }
  return { ok: true, parsed: true, formatted: true, score: 2_000_000, checked_chars: text.length };
}
