/** Parsing TS/TSX/JS/JSX into ESTree with typescript-estree; syntax errors become AIP_ERR_PARSE with a position. */
import { parse, type TSESTree } from "@typescript-eslint/typescript-estree";
import { AipError } from "../../protocol/errors.js";
import type { Dialect } from "./language.js";

export type Program = TSESTree.Program;
export type Node = TSESTree.Node;
export type Comment = TSESTree.Comment;

/** A parsed source: the text it was parsed from and its ESTree program (with comments). */
export interface ParsedFile {
  source: string;
  program: Program;
  dialect: Dialect;
  /** How this file came to be: a full parse, a re-parse of the changed top-level statements, or of statements inside one block ("nested"). */
  via: "full" | "incremental" | "nested";
}

interface EstreeError {
  message: string;
  location?: { start: { line: number; column: number; offset: number } };
}

/** Parse `source`; throws AipError AIP_ERR_PARSE with 1-based `line` and 0-based `column` on a syntax error. */
export function parseProgram(source: string, dialect: Dialect, filePath?: string): Program {
  try {
    return parse(source, { loc: true, range: true, comment: true, jsx: dialect.jsx, errorOnUnknownASTType: false });
  } catch (err) {
    const e = err as EstreeError;
    if (!e.location) throw err;
    const { line, column } = e.location.start;
    const where = `${filePath ?? "source"}:${line}:${column + 1}`;
    throw new AipError("AIP_ERR_PARSE", `${where}: ${e.message}`, {
      extensions: { line, column, ...(filePath ? { file_path: filePath } : {}) },
    });
  }
}

/** Parse a whole file. */
export function parseFile(source: string, dialect: Dialect, filePath?: string): ParsedFile {
  return { source, program: parseProgram(source, dialect, filePath), dialect, via: "full" };
}
