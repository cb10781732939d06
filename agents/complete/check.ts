/**
 * The syntax check: splice the completion into the buffer; the touched region must parse and
 * prettier must format it.
 *
 * The region is as small as stays faithful: inside a function, the statements of the innermost
 * block around the cursor plus one neighbour on each side, parsed inside a wrapper function with the
 * same async/generator flags (incremental.ts); elsewhere the top-level statement around the cursor;
 * without a parse of the buffer, the whole buffer. typescript-estree costs ~2-4 µs a character and
 * prettier about five times that, so checking a whole 1,700-character declaration took 6 ms to parse
 * and 24 ms to format, against an 8 ms budget for the stage.
 *
 * The parse is TypeScript's own parser (its syntax diagnostics), ~20 µs for a block region against
 * ~300-900 µs for typescript-estree, which also converts to ESTree: a candidate that does not parse
 * is rejected at once. One that does goes to prettier, whose typescript parser is typescript-estree
 * (with its extra checks) followed by the printer, so "parses and formats" is decided by prettier.
 * Prettier runs as its standalone build with only the plugins it needs: option normalisation walks
 * every loaded plugin's options, and with all built-in languages loaded a call cost ~1.6 ms against
 * ~1.1 ms (tight loop, 150 characters).
 */

/** The prettier call of the check (also used to warm it up). */
export function formatChecked(text: string, dialect: Dialect): Promise<string> {
  // Standalone prettier has no file path inference: the parser decides JSX (typescript: by content; babel: always allowed).
  // Whether prettier can format the code does not depend on the layout: an unbounded line width and no
  // formatting of embedded languages (CSS/GraphQL in template literals, whose errors prettier swallows
  // anyway) save it the line-fitting and embed work, ~30% of a call on a statement.
  return format(text, {
    parser: dialect.language === "typescript" ? "typescript" : "babel",
    plugins: [estreePlugin, dialect.language === "typescript" ? typescriptPlugin : babelPlugin],
    printWidth: 10_000,
    embeddedLanguageFormatting: "off",
  });
}
import * as babelPlugin from "prettier/plugins/babel";
import * as estreePlugin from "prettier/plugins/estree";
import * as typescriptPlugin from "prettier/plugins/typescript";
import { format } from "prettier/standalone";
import ts from "typescript";
import { ancestorsAt, statementAt } from "../code/cursor.js";
import { blockRegionAt, wrapperHead } from "../code/incremental.js";
import type { Dialect } from "../code/language.js";
import type { ParsedFile } from "../code/parse.js";

export interface CheckResult {
  ok: boolean;
  parsed: boolean;
  formatted: boolean;
  error?: string;
  /** How far into the completion the parser got (for ranking best-effort candidates). */
  score: number;
  /** What was checked: statements of the enclosing block, the top-level statement, or the whole buffer. */
  region: "block" | "statement" | "file";
  /** Characters parsed (wrapper included). */
  checked_chars: number;
}

/** A parse of the buffer to take region boundaries from. */
export interface SpliceBase {
  file: ParsedFile;
  /** Characters the parsed buffer has at the cursor that the real one lacks (a placeholder patch), else 0. */
  extra: number;
}

/** The span of top-level statements around `offset`, from the end of the previous statement to the start of the next. */
function statementRegion(file: ParsedFile, offset: number): [number, number] {
  const body = file.program.body;
  const { before: prev, after: next } = statementAt(body, offset);
  return [prev >= 0 ? body[prev]!.range[1] : 0, next < body.length ? body[next]!.range[0] : file.source.length];
}

interface Spliced {
  /** The region with the completion at the cursor (and the wrapper). */
  text: string;
  /** Where the cursor is in `text`, and where the region starts in the buffer. */
  at: number;
  start: number;
  region: CheckResult["region"];
  /** For a block region: the statements at the cursor alone, wrapped the same way (what prettier formats when it parses). */
  inner?: string;
}

/** The text to check around the cursor. */
function spliced(source: string, offset: number, completion: string, base: SpliceBase | undefined): Spliced {
  if (!base) return { text: source.slice(0, offset) + completion + source.slice(offset), at: offset, start: 0, region: "file" };
  // Region ends come from the parsed buffer: past the cursor they are `extra` characters later than in `source`.
  const real = (end: number): number => (end >= offset + base.extra ? end - base.extra : Math.min(end, offset));
  const block = blockRegionAt(ancestorsAt(base.file.program, offset), offset);
  if (block) {
    const head = wrapperHead(block.fn);
    const wrap = (r0: number, r1: number): string => `${head}${source.slice(r0, offset)}${completion}${source.slice(offset, real(r1))}\n}`;
    return { text: wrap(block.r0, block.r1), at: head.length + offset - block.r0, start: block.r0, region: "block", inner: wrap(block.inner[0], block.inner[1]) };
  }
  const [r0, r1] = statementRegion(base.file, offset);
  return { text: source.slice(r0, offset) + completion + source.slice(offset, real(r1)), at: offset - r0, start: r0, region: "statement" };
}

/** The 1-based line of `offset`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

const KIND: Record<string, ts.ScriptKind> = { "typescript:false": ts.ScriptKind.TS, "typescript:true": ts.ScriptKind.TSX, "javascript:false": ts.ScriptKind.JS, "javascript:true": ts.ScriptKind.JSX };

/** TypeScript's first syntax error in `text` (1-based line), if any. */
export function syntaxError(text: string, dialect: Dialect): { line: number; message: string } | undefined {
  const file = ts.createSourceFile(`check.${dialect.language === "typescript" ? "ts" : "js"}${dialect.jsx ? "x" : ""}`, text, ts.ScriptTarget.Latest, false, KIND[`${dialect.language}:${dialect.jsx}`]);
  // `parseDiagnostics` is what typescript-estree reads too; it is not in the public typings.
  const first = (file as unknown as { parseDiagnostics: readonly ts.DiagnosticWithLocation[] }).parseDiagnostics[0];
  if (!first) return undefined;
  return { line: file.getLineAndCharacterOfPosition(first.start).line + 1, message: ts.flattenDiagnosticMessageText(first.messageText, "\n") };
}

/** Check `completion` inserted at `offset` of `source`. */
export async function checkSplice(source: string, offset: number, completion: string, dialect: Dialect, base: SpliceBase | undefined): Promise<CheckResult> {
  const { text, at: cursor, start, region, inner } = spliced(source, offset, completion, base);
  // Rank failures by how far past the cursor the parser got, in lines (a later error = a better candidate).
  const failed = (line: number, message: string, parsed: boolean): CheckResult => {
    // The region's first line is the buffer's line `first` (the wrapper adds no line): report buffer lines.
    const first = lineAt(source, start);
    return { ok: false, parsed, formatted: false, error: `line ${first + line - 1}: ${message}`, score: line - lineAt(text, cursor), region, checked_chars: text.length };
  };
  const bad = syntaxError(text, dialect);
  if (bad) return failed(bad.line, bad.message, false);
  try {
    // Prettier's cost grows with the text: it gets the statements at the cursor alone, and the region
    // with its neighbours only when those do not parse alone (the completion runs on into a neighbour).
    if (inner === undefined) await formatChecked(text, dialect);
    else await formatChecked(inner, dialect).catch((err: unknown) => ((err as { loc?: unknown }).loc ? formatChecked(text, dialect) : Promise.reject(err)));
  } catch (err) {
    const line = (err as { loc?: { start?: { line?: number } } }).loc?.start?.line;
    const message = (err as Error).message.split("\n")[0]!;
    if (line !== undefined) return failed(line, `prettier: ${message}`, false);
    return { ok: false, parsed: true, formatted: false, error: `prettier: ${message}`, score: 1_000_000, region, checked_chars: text.length };
  }
  return { ok: true, parsed: true, formatted: true, score: 2_000_000, region, checked_chars: text.length };
}
