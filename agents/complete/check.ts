/**
 * The syntax check: splice the completion into the buffer; the touched region must parse and
 * prettier must format it.
 *
 * The region is as small as stays faithful: the items of the innermost container around the cursor
 * (a function's block, a namespace body, a class body) plus one neighbour on each side, parsed inside
 * a wrapper that gives them the same meaning (a function with the same async/generator flags, a
 * namespace, a class: incremental.ts); elsewhere the top-level statement around the cursor; without a
 * parse of the buffer, the whole buffer. typescript-estree's cost grows with the characters and
 * prettier's far more, so checking a whole large declaration would overrun the stage's budget.
 *
 * The parse is TypeScript's own parser (its syntax diagnostics), much cheaper for a block region than
 * typescript-estree, which also converts to ESTree: a candidate that does not parse
 * is rejected at once. One that does goes to prettier, whose typescript parser is typescript-estree
 * (with its extra checks) followed by the printer, so "parses and formats" is decided by prettier.
 * Prettier runs as its standalone build with only the plugins it needs: option normalisation walks
 * every loaded plugin's options, so every built-in language loaded would make each call dearer.
 */
import type { Plugin } from "prettier";
import { format } from "prettier/standalone";
import type TypeScript from "typescript";
import { ancestorsAt, statementAt } from "../lib/code/cursor.js";
import { blockRegionAt, moduleMarker } from "../lib/code/incremental.js";
import type { Dialect } from "../lib/code/language.js";
import type { ParsedFile } from "../lib/code/parse.js";
import { lineAt } from "../lib/code/position.js";
import { ts } from "../lib/code/typescript.js";

// `require`, not `import`: importing the large CommonJS `typescript` from ESM has Node scan its source
// for export names first, slowing start-up; typescript-estree has already required it anyway.

/** Prettier's plugins, loaded on first use (each is a large bundle of JavaScript to compile). */
const PLUGINS: Record<string, () => Promise<Plugin>> = {
  estree: () => import("prettier/plugins/estree") as Promise<Plugin>,
  typescript: () => import("prettier/plugins/typescript"),
  babel: () => import("prettier/plugins/babel"),
};
const loaded = new Map<string, Promise<Plugin>>();

function plugin(name: string): Promise<Plugin> {
  let p = loaded.get(name);
  if (!p) loaded.set(name, (p = PLUGINS[name]!()));
  return p;
}

/** The prettier call of the check (also used to warm it up). */
export async function formatChecked(text: string, dialect: Dialect): Promise<string> {
  const parser = dialect.language === "typescript" ? "typescript" : "babel";
  const plugins = await Promise.all([plugin("estree"), plugin(parser)]);
  // Standalone prettier has no file path inference: the parser decides JSX (typescript: by content; babel: always allowed).
  // Whether prettier can format the code does not depend on the layout: an unbounded line width and no
  // formatting of embedded languages (CSS/GraphQL in template literals, whose errors prettier swallows
  // anyway) save it the line-fitting and embed work, a large share of a call on a statement.
  return format(text, { parser, plugins, printWidth: 10_000, embeddedLanguageFormatting: "off" });
}

export interface CheckResult {
  ok: boolean;
  parsed: boolean;
  formatted: boolean;
  error?: string;
  /** How far into the completion the parser got (for ranking best-effort candidates). */
  score: number;
  /** What was checked: items of the enclosing container, the top-level statement, or the whole buffer. */
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

/**
 * Top-level statements around `offset`: the statement at it (or the gap it is in) alone, and with
 * one neighbour on each side (so text inserted at the cursor meets its real neighbours).
 */
function statementRegion(file: ParsedFile, offset: number): { outer: [number, number]; inner: [number, number] } {
  const body = file.program.body;
  const { index, before, after } = statementAt(body, offset);
  const [first, last] = index >= 0 ? [index, index] : [after, before];
  const inner: [number, number] = [
    first > 0 ? body[first - 1]!.range[1] : 0,
    last + 1 < body.length ? body[last + 1]!.range[0] : file.source.length,
  ];
  const outer: [number, number] = [
    first > 0 ? body[first - 1]!.range[0] : 0,
    last + 1 < body.length ? body[last + 1]!.range[1] : file.source.length,
  ];
  return { outer, inner };
}

interface Spliced {
  /** The region with the completion at the cursor (and the wrapper). */
  text: string;
  /** Where the cursor is in `text`, and where the region starts in the buffer. */
  at: number;
  start: number;
  region: CheckResult["region"];
  /** Where the wrapper must end in `text` (block regions). */
  wrapperEnd?: number;
  /** The statements at the cursor alone, wrapped the same way (what prettier formats when they parse alone). */
  inner?: string;
}

/** The text to check around the cursor. */
function spliced(source: string, offset: number, completion: string, base: SpliceBase | undefined): Spliced {
  if (!base)
    return { text: source.slice(0, offset) + completion + source.slice(offset), at: offset, start: 0, region: "file" };
  // Region ends come from the parsed buffer: past the cursor they are `extra` characters later than in `source`.
  const real = (end: number): number => (end >= offset + base.extra ? end - base.extra : Math.min(end, offset));
  // A module's region is parsed as a module too (top-level `await`, strict mode).
  const marker = moduleMarker(base.file);
  const block = blockRegionAt(ancestorsAt(base.file.program, offset), offset, base.file.source);
  if (block) {
    const { head, tail } = block;
    const wrap = (r0: number, r1: number): string =>
      `${head}${source.slice(r0, offset)}${completion}${source.slice(offset, real(r1))}${tail}${marker}`;
    const text = wrap(block.r0, block.r1);
    return {
      text,
      at: head.length + offset - block.r0,
      start: block.r0,
      region: "block",
      inner: wrap(block.inner[0], block.inner[1]),
      wrapperEnd: text.length - marker.length,
    };
  }
  const { outer, inner } = statementRegion(base.file, offset);
  const cut = (r0: number, r1: number): string =>
    `${source.slice(r0, offset)}${completion}${source.slice(offset, real(r1))}${marker}`;
  return {
    text: cut(outer[0], outer[1]),
    at: offset - outer[0],
    start: outer[0],
    region: "statement",
    inner: cut(inner[0], inner[1]),
  };
}

/** The script kind of a dialect (a function: the compiler loads on first use). */
const scriptKind = (dialect: Dialect): TypeScript.ScriptKind =>
  dialect.language === "javascript"
    ? dialect.jsx
      ? ts.ScriptKind.JSX
      : ts.ScriptKind.JS
    : dialect.jsx
      ? ts.ScriptKind.TSX
      : ts.ScriptKind.TS;

/**
 * TypeScript's first syntax error in `text` (1-based line), if any. With `wrapperEnd`, the text is a
 * region inside a wrapper that must stay whole: its first statement has to end there (a completion
 * that closes the enclosing block leaves the rest of the region outside the wrapper, where it may
 * parse without meaning the same).
 */
export function syntaxError(
  text: string,
  dialect: Dialect,
  wrapperEnd?: number,
): { line: number; message: string; count: number } | undefined {
  const file = ts.createSourceFile(
    `check.${dialect.language === "typescript" ? "ts" : "js"}${dialect.jsx ? "x" : ""}`,
    text,
    ts.ScriptTarget.Latest,
    false,
    scriptKind(dialect),
  );
  // `parseDiagnostics` is what typescript-estree reads too; it is not in the public typings.
  const diagnostics = (file as unknown as { parseDiagnostics: readonly TypeScript.DiagnosticWithLocation[] })
    .parseDiagnostics;
  const first = diagnostics[0];
  if (first)
    return {
      line: file.getLineAndCharacterOfPosition(first.start).line + 1,
      message: ts.flattenDiagnosticMessageText(first.messageText, "\n"),
      count: diagnostics.length,
    };
  const wrapper = file.statements[0];
  if (wrapperEnd !== undefined && wrapper && wrapper.end !== wrapperEnd) {
    return {
      line: file.getLineAndCharacterOfPosition(wrapper.end).line + 1,
      message: "The completion closes the enclosing block",
      count: 1,
    };
  }
  return undefined;
}

/** Check `completion` inserted at `offset` of `source`. */
export async function checkSplice(
  source: string,
  offset: number,
  completion: string,
  dialect: Dialect,
  base: SpliceBase | undefined,
): Promise<CheckResult> {
  const { text, at: cursor, start, region, inner, wrapperEnd } = spliced(source, offset, completion, base);
  // Rank failures by how far past the cursor the parser got, in lines (a later error = a better candidate).
  const failed = (line: number, message: string, parsed: boolean): CheckResult => {
    // The region's first line is the buffer's line `first` (the wrapper adds no line): report buffer lines.
    const first = lineAt(source, start);
    return {
      ok: false,
      parsed,
      formatted: false,
      error: `line ${first + line - 1}: ${message}`,
      score: line - lineAt(text, cursor),
      region,
      checked_chars: text.length,
    };
  };
  const bad = syntaxError(text, dialect, wrapperEnd);
  if (bad) {
    // A buffer that was already broken around the cursor (docs/agents.md "Broken buffers"): the completion
    // passes when it adds no syntax error to the region; prettier cannot format broken code.
    if (base && base.file.diagnostics.length > 0) {
      const without = syntaxError(
        spliced(source, offset, "", base).text,
        dialect,
        wrapperEnd === undefined ? undefined : wrapperEnd - completion.length,
      );
      if (without && bad.count <= without.count)
        return {
          ok: true,
          parsed: false,
          formatted: false,
          error: `the buffer already had a syntax error here (line ${lineAt(source, start) + without.line - 1}: ${without.message}); the completion adds none`,
          score: 1_500_000,
          region,
          checked_chars: text.length,
        };
    }
    return failed(bad.line, bad.message, false);
  }
  try {
    // Prettier's cost grows with the text: it gets the statements at the cursor alone, and the region
    // with its neighbours only when those do not parse alone (the completion runs on into a neighbour).
    if (inner === undefined) await formatChecked(text, dialect);
    else
      await formatChecked(inner, dialect).catch((err: unknown) =>
        (err as { loc?: unknown }).loc ? formatChecked(text, dialect) : Promise.reject(err),
      );
  } catch (err) {
    const line = (err as { loc?: { start?: { line?: number } } }).loc?.start?.line;
    const message = (err as Error).message.split("\n")[0]!;
    if (line !== undefined) return failed(line, `prettier: ${message}`, false);
    return {
      ok: false,
      parsed: true,
      formatted: false,
      error: `prettier: ${message}`,
      score: 1_000_000,
      region,
      checked_chars: text.length,
    };
  }
  return { ok: true, parsed: true, formatted: true, score: 2_000_000, region, checked_chars: text.length };
}
