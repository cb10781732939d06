/** The slice at a cursor: node, enclosing function (decorators, doc comment), enclosing class, symbols in scope. */
import { ancestorsAt, enclosingClass, enclosingFunction, type ClassNode, type FunctionSlice } from "./cursor.js";
import type { Node, ParsedFile } from "./parse.js";
import { offsetAt, type Position } from "./position.js";
import { symbolsInScope, topLevelDeclarations, type SymbolEntry } from "./symbols.js";

/** Module-scope declarations per parsed file: computed once, reused by every cursor in that version. */
const MODULE_SYMBOLS = new WeakMap<ParsedFile, SymbolEntry[]>();

function moduleEntries(file: ParsedFile): SymbolEntry[] {
  let entries = MODULE_SYMBOLS.get(file);
  if (!entries) {
    entries = file.program.body.flatMap((s) => topLevelDeclarations(s, file.source));
    MODULE_SYMBOLS.set(file, entries);
  }
  return entries;
}

export interface Slice {
  offset: number;
  chain: Node[];
  node: Node;
  fn?: FunctionSlice;
  cls?: ClassNode;
  symbols: SymbolEntry[];
}

/** The symbols in scope for an ancestor chain of `file` (module scope memoised per file version). */
export function symbolsAt(file: ParsedFile, chain: Node[], offset: number): SymbolEntry[] {
  return symbolsInScope(chain, offset, file.source, moduleEntries(file));
}

/** Everything the agents need to know about the cursor position in a parsed file; `moduleScope: false` leaves module-level names out of `symbols`; `starts`: the source's line starts, if known. */
export function sliceAt(
  file: ParsedFile,
  cursor: Position,
  options: { moduleScope?: boolean; starts?: readonly number[] } = {},
): Slice {
  const offset = offsetAt(file.source, cursor, options.starts);
  const chain = ancestorsAt(file.program, offset);
  const fn = enclosingFunction(chain, file.program, file.source);
  const cls = enclosingClass(chain);
  return {
    offset,
    chain,
    node: chain[chain.length - 1]!,
    ...(fn ? { fn } : {}),
    ...(cls ? { cls } : {}),
    symbols:
      options.moduleScope === false ? symbolsInScope(chain, offset, file.source, []) : symbolsAt(file, chain, offset),
  };
}
