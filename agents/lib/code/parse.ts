/**
 * Parsing TS/TSX/JS/JSX into ESTree. TypeScript's own parser reads the text and recovers from syntax
 * errors (it never throws); typescript-estree converts its tree. A buffer with errors still gets a
 * tree, plus `diagnostics` (docs/agents.md "Broken buffers"): the code agents answer from it with
 * `partial: true`. AIP_ERR_PARSE remains for what cannot be parsed at all (nesting too deep to follow).
 */
import { createRequire } from "node:module";
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import type * as Estree from "@typescript-eslint/typescript-estree/use-at-your-own-risk";
import type * as TS from "typescript";
import { ts } from "./typescript.js";
import { AipError } from "../../../protocol/contract/errors.js";
import { dialectOf, type Dialect } from "./language.js";
import { lineStarts, positionAt } from "./position.js";

export type Program = TSESTree.Program;
export type Node = TSESTree.Node;
export type Comment = TSESTree.Comment;

/** A syntax error found while parsing, at a UTF-16 offset of the source. */
export interface ParseDiagnostic {
  start: number;
  message: string;
}

/** A diagnostic as the agents report it: 1-based line, 0-based UTF-16 column (docs/agents.md "Broken buffers"). */
export interface ReportedDiagnostic {
  line: number;
  column: number;
  message: string;
}

/** A parsed source: the text it was parsed from and its ESTree program (with comments). */
export interface ParsedFile {
  source: string;
  program: Program;
  dialect: Dialect;
  /** How this file came to be: a full parse, a re-parse of the changed top-level statements, or of statements inside one block ("nested"). */
  via: "full" | "incremental" | "nested";
  /** Syntax errors the parser recovered from, in source order (empty for a clean buffer). */
  diagnostics: ParseDiagnostic[];
}

let converter: typeof Estree.astConverter | undefined;
/**
 * typescript-estree's converter, loaded by the first parse: a process that parses nothing (a refused
 * request, `--manifest`) does not load its modules.
 */
function astConverter(...args: Parameters<typeof Estree.astConverter>): ReturnType<typeof Estree.astConverter> {
  converter ??= (
    createRequire(import.meta.url)("@typescript-eslint/typescript-estree/use-at-your-own-risk") as typeof Estree
  ).astConverter;
  return converter(...args);
}

/**
 * Brackets (`(`, `[`, `{`, `${`) nested deeper than this are refused with AIP_ERR_PARSE before parsing:
 * the parser, the tree conversion and every walk over the tree recurse once or more per level.
 */
export const MAX_NESTING = 1000;

/** The deepest bracket nesting of `text`, outside comments and string literals (a linear scan; stops past `limit`). */
export function nestingDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 40 || c === 91 || c === 123) {
      // ( [ {
      if (++depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 41 || c === 93 || c === 125) {
      if (depth > 0) depth--;
    } else if (c === 47 && text.charCodeAt(i + 1) === 47) {
      const end = text.indexOf("\n", i);
      i = end === -1 ? n : end;
    } else if (c === 47 && text.charCodeAt(i + 1) === 42) {
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? n : end + 1;
    } else if (c === 34 || c === 39) {
      // A quoted string ends at its quote or the line's end (an unterminated string).
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === c || d === 10) break;
      }
    }
  }
  return max;
}

function tooDeep(where: string, detail: string): AipError {
  return new AipError("AIP_ERR_PARSE", `${where}: ${detail}; nothing could be produced from it`, {
    suggestion: `Send a source with brackets nested at most ${MAX_NESTING} deep`,
    extensions: { limit: MAX_NESTING, reason: "nesting" },
  });
}

/** True for the error a too-deep recursion throws. */
export function isStackOverflow(err: unknown): boolean {
  return err instanceof RangeError && /call stack/i.test(err.message);
}

/** Run `fn`; a stack overflow (pathological nesting the bracket count did not catch) becomes AIP_ERR_PARSE, not a crash. */
export function guardDepth<T>(fn: () => T, where = "source"): T {
  try {
    return fn();
  } catch (err) {
    if (isStackOverflow(err))
      throw tooDeep(where, "the source nests too deeply to be parsed (the parser ran out of stack)");
    throw err;
  }
}

/** A handler whose stack overflows (a tree deeper than the walks over it can follow) answers AIP_ERR_PARSE instead of failing as an internal error. */
export function guardHandler<A extends unknown[], R>(handler: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    try {
      return await handler(...args);
    } catch (err) {
      if (isStackOverflow(err))
        throw tooDeep("source", "the source nests too deeply to be followed (the agent ran out of stack)");
      throw err;
    }
  };
}

const CONVERT_STRICT = {
  allowInvalidAST: false,
  errorOnUnknownASTType: false,
  range: true,
  loc: true,
  comment: true,
  tokens: null,
  suppressDeprecatedPropertyWarnings: true,
};
const CONVERT_LENIENT = { ...CONVERT_STRICT, allowInvalidAST: true };

interface InternalSourceFile extends TS.SourceFile {
  parseDiagnostics: TS.DiagnosticWithLocation[];
}

/**
 * Parse `source` with error recovery: the tree and the syntax errors (empty when clean). Throws
 * AIP_ERR_PARSE only when nothing can be produced (brackets nested over MAX_NESTING, or deeper
 * than the stack allows), with a detail saying so.
 */
export function parseTolerant(
  source: string,
  dialect: Dialect,
  filePath?: string,
): { program: Program; diagnostics: ParseDiagnostic[] } {
  const where = filePath ?? "source";
  const depth = nestingDepth(source, MAX_NESTING);
  if (depth > MAX_NESTING) throw tooDeep(where, `brackets nest more than ${MAX_NESTING} deep`);
  return guardDepth(() => {
    const sf = ts.createSourceFile(
      dialect.jsx ? "estree.tsx" : "estree.ts",
      source,
      { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone },
      true,
      dialect.jsx ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
    ) as InternalSourceFile;
    const diagnostics: ParseDiagnostic[] = sf.parseDiagnostics.map((d) => ({
      start: d.start,
      message: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
    }));
    // The converter refuses trees with errors; they are reported as diagnostics instead.
    sf.parseDiagnostics = [];
    if (diagnostics.length === 0) {
      try {
        return { program: astConverter(sf, CONVERT_STRICT as never, false).estree as Program, diagnostics };
      } catch (err) {
        // A grammar error typescript-estree checks for (and TypeScript leaves to its checker).
        const e = err as { message?: string; index?: number };
        if (typeof e.index !== "number" || isStackOverflow(err)) throw err;
        diagnostics.push({ start: e.index, message: e.message ?? String(err) });
      }
    }
    diagnostics.sort((a, b) => a.start - b.start);
    return { program: convertRecovered(sf, source, dialect, diagnostics, where), diagnostics };
  }, where);
}

/** Spaces for every character of [a, b) but line breaks: the text is gone, every offset and line stays. */
function blank(text: string, a: number, b: number): string {
  return text.slice(0, a) + text.slice(a, b).replace(/[^\r\n]/g, " ") + text.slice(b);
}

/**
 * Convert a recovered tree. typescript-estree's converter can fail on shapes only error recovery
 * makes (an empty type parameter list cut off by the end of the file): then the top-level statements
 * holding an error are blanked out and the rest converted, and failing that, everything from the
 * first error on. The diagnostics stay those of the real text.
 */
function convertRecovered(
  sf: InternalSourceFile,
  source: string,
  dialect: Dialect,
  diagnostics: ParseDiagnostic[],
  where: string,
): Program {
  try {
    return astConverter(sf, CONVERT_LENIENT as never, false).estree as Program;
  } catch (err) {
    if (isStackOverflow(err)) throw err;
    let text = source;
    for (const st of sf.statements)
      if (diagnostics.some((d) => st.pos <= d.start && d.start <= st.end)) text = blank(text, st.pos, st.end);
    const first = diagnostics[0]?.start ?? 0;
    const firstStatement = sf.statements.find((st) => first <= st.end)?.pos ?? first;
    for (const attempt of [text, blank(source, firstStatement, source.length)]) {
      const again = ts.createSourceFile(
        dialect.jsx ? "estree.tsx" : "estree.ts",
        attempt,
        { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone },
        true,
        dialect.jsx ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
      ) as InternalSourceFile;
      again.parseDiagnostics = [];
      try {
        return astConverter(again, CONVERT_LENIENT as never, false).estree as Program;
      } catch {
        // the next, coarser attempt
      }
    }
    throw new AipError(
      "AIP_ERR_PARSE",
      `${where}: the syntax error at offset ${first} left a tree that could not be converted (${(err as Error).message}); nothing could be produced from it`,
      {
        extensions: { reason: "unrecoverable" },
      },
    );
  }
}

/** Parse `source` strictly: throws AipError AIP_ERR_PARSE with 1-based `line` and 0-based `column` at the first syntax error. */
export function parseProgram(source: string, dialect: Dialect, filePath?: string): Program {
  const { program, diagnostics } = parseTolerant(source, dialect, filePath);
  const first = diagnostics[0];
  if (!first) return program;
  const { line, column } = positionAt(first.start, lineStarts(source));
  throw new AipError("AIP_ERR_PARSE", `${filePath ?? "source"}:${line}:${column + 1}: ${first.message}`, {
    extensions: { line, column, ...(filePath ? { file_path: filePath } : {}) },
  });
}

/** Parse a whole file (recovering from syntax errors, see `parseTolerant`). */
export function parseFile(source: string, dialect: Dialect, filePath?: string): ParsedFile {
  const { program, diagnostics } = parseTolerant(source, dialect, filePath);
  return { source, program, dialect, via: "full", diagnostics };
}

/** The most diagnostics a response carries (the count is reported in full). */
export const MAX_REPORTED_DIAGNOSTICS = 20;

/** The file's diagnostics as responses carry them (`starts`: the source's line starts, if known). */
export function reportDiagnostics(
  file: Pick<ParsedFile, "source" | "diagnostics">,
  starts?: readonly number[],
): ReportedDiagnostic[] {
  if (file.diagnostics.length === 0) return [];
  const ls = starts ?? lineStarts(file.source);
  return file.diagnostics.slice(0, MAX_REPORTED_DIAGNOSTICS).map((d) => {
    const { line, column } = positionAt(d.start, ls);
    return { line, column, message: d.message };
  });
}

/** What a response adds for a file that parsed with errors: `partial: true` and the diagnostics; nothing for a clean one. */
export function partialFields(
  file: Pick<ParsedFile, "source" | "diagnostics">,
  starts?: readonly number[],
): { partial?: true; diagnostics?: ReportedDiagnostic[] } {
  if (file.diagnostics.length === 0) return {};
  return { partial: true, diagnostics: reportDiagnostics(file, starts) };
}

/** Parse a one-line module: loads the compiler and the converter (on first use otherwise) and compiles their parse paths. */
export function warmParser(): void {
  parseTolerant("export const warm: number = 1;\n", dialectOf("typescript"));
}
