/**
 * Re-parsing a changed buffer by re-parsing only the top-level declarations the edit touches.
 *
 * Why this strategy (figures in bench/results, README "Agents"): a full typescript-estree parse of a
 * 2,000-line file costs tens of milliseconds, over the 15 ms slicing budget. TypeScript's incremental
 * `updateSourceFile` only speeds up the TS-AST half; typescript-estree must still convert the whole
 * tree to ESTree. Re-parsing the touched top-level statements (with the untouched prefix blanked to
 * whitespace so every position comes out absolute) costs about the size of the edited declaration,
 * and the untouched statements after it only have their positions shifted.
 */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import { contentHash, parseProgram, type Comment, type Node, type ParsedFile } from "./parse.js";
import { forEachChild } from "./walk.js";

/** Fall back to a full parse when the edited region is this large a share of the file. */
const MAX_REGION_SHARE = 0.5;

/** A statement starting with one of these may continue the previous statement (no ASI). */
const CONTINUES = /^\s*[([`+\-/<]/;

const BLOCK_ENDED = new Set(["FunctionDeclaration", "ClassDeclaration", "TSInterfaceDeclaration", "TSEnumDeclaration", "TSModuleDeclaration", "BlockStatement"]);

/** True when nothing that follows `stmt` can be parsed as part of it. */
function endsSafely(stmt: Node, source: string): boolean {
  if (source[stmt.range[1] - 1] === ";") return true;
  const inner = (stmt.type === "ExportNamedDeclaration" || stmt.type === "ExportDefaultDeclaration") && stmt.declaration ? stmt.declaration : stmt;
  return BLOCK_ENDED.has(inner.type);
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function commonSuffix(a: string, b: string, max: number): number {
  let i = 0;
  while (i < max && a.charCodeAt(a.length - 1 - i) === b.charCodeAt(b.length - 1 - i)) i++;
  return i;
}

function lineCol(source: string, offset: number): { line: number; column: number } {
  let line = 1;
  let last = -1;
  for (let i = source.indexOf("\n"); i !== -1 && i < offset; i = source.indexOf("\n", i + 1)) {
    line++;
    last = i;
  }
  return { line, column: offset - last - 1 };
}

interface Shift {
  delta: number;
  lineDelta: number;
  /** The old line on which columns move too (the line where the edited region ended). */
  line: number;
  colDelta: number;
}

function shiftLoc(loc: TSESTree.SourceLocation, s: Shift): void {
  for (const p of [loc.start, loc.end]) {
    if (p.line === s.line) p.column += s.colDelta;
    p.line += s.lineDelta;
  }
}

function shiftComment(c: Comment, s: Shift): void {
  c.range[0] += s.delta;
  c.range[1] += s.delta;
  shiftLoc(c.loc, s);
}

/** Move a subtree's positions in place (it now belongs to the new file). */
function shiftTree(node: Node, s: Shift): void {
  node.range[0] += s.delta;
  node.range[1] += s.delta;
  shiftLoc(node.loc, s);
  forEachChild(node, (child) => shiftTree(child, s));
}

/**
 * The new file from the old one when the edit lies within a few top-level statements;
 * `undefined` when a full parse is needed (large edits, ASI hazards, or the region alone does not parse).
 * Takes ownership of `old`'s tree: the caller must drop `old`.
 */
export function reparseChanged(old: ParsedFile, source: string, filePath?: string): ParsedFile | undefined {
  const prev = old.source;
  const prefix = commonPrefix(prev, source);
  const suffix = commonSuffix(prev, source, Math.min(prev.length, source.length) - prefix);
  const editStart = prefix;
  const oldEditEnd = prev.length - suffix;
  const delta = source.length - prev.length;
  const body = old.program.body;
  let i = 0;
  while (i < body.length && body[i]!.range[1] < editStart) i++;
  let j = body.length - 1;
  while (j >= 0 && body[j]!.range[0] > oldEditEnd) j--;
  const r0 = i > 0 ? body[i - 1]!.range[1] : 0;
  const r1 = j + 1 < body.length ? body[j + 1]!.range[0] : prev.length;
  if (r1 - r0 > prev.length * MAX_REGION_SHARE && prev.length > 2_000) return undefined;
  const newR1 = r1 + delta;
  const region = source.slice(r0, newR1);
  if (i > 0 && !endsSafely(body[i - 1]!, prev) && CONTINUES.test(region)) return undefined;
  if (j + 1 < body.length && CONTINUES.test(source.slice(newR1, newR1 + 64))) {
    if (!region.trimEnd().endsWith(";")) return undefined;
  }
  let fresh;
  try {
    fresh = parseProgram(region, old.dialect, filePath);
  } catch {
    return undefined; // e.g. an opened comment that the untouched rest closes: let the full parse decide
  }
  // The region was parsed alone: move its nodes to where the region starts.
  const start = lineCol(prev, r0);
  const into: Shift = { delta: r0, lineDelta: start.line - 1, line: 1, colDelta: start.column };
  for (const s of fresh.body) shiftTree(s, into);
  for (const c of fresh.comments ?? []) shiftComment(c, into);
  const oldEnd = lineCol(prev, r1);
  const newEnd = lineCol(source, newR1);
  const shift: Shift = { delta, lineDelta: newEnd.line - oldEnd.line, line: oldEnd.line, colDelta: newEnd.column - oldEnd.column };
  const after = body.slice(j + 1);
  for (const s of after) shiftTree(s, shift);
  const comments = old.program.comments ?? [];
  const before = comments.filter((c) => c.range[1] <= r0);
  const afterComments = comments.filter((c) => c.range[0] >= r1);
  for (const c of afterComments) shiftComment(c, shift);
  const program = old.program;
  program.body = [...body.slice(0, i), ...fresh.body, ...after];
  program.comments = [...before, ...(fresh.comments ?? []), ...afterComments] as Comment[];
  program.range = [program.range[0], program.range[1] + delta];
  program.loc = { start: program.loc.start, end: lineCol(source, source.length) };
  return { source, program, dialect: old.dialect, hash: contentHash(source), via: "incremental" };
}
