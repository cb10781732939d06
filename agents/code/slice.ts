/** The slice at a cursor: node, enclosing function (decorators, doc comment), enclosing class, symbols in scope. */
import { ancestorsAt, enclosingClass, enclosingFunction, type ClassNode, type FunctionSlice } from "./cursor.js";
import type { Node, ParsedFile } from "./parse.js";
import { offsetAt, type Position } from "./position.js";
import { symbolsInScope, type SymbolEntry } from "./symbols.js";

export interface Slice {
  offset: number;
  chain: Node[];
  node: Node;
  fn?: FunctionSlice;
  cls?: ClassNode;
  symbols: SymbolEntry[];
}

/** Everything the agents need to know about the cursor position in a parsed file. */
export function sliceAt(file: ParsedFile, cursor: Position): Slice {
  const offset = offsetAt(file.source, cursor);
  const chain = ancestorsAt(file.program, offset);
  const fn = enclosingFunction(chain, file.program, file.source);
  const cls = enclosingClass(chain);
  return {
    offset,
    chain,
    node: chain[chain.length - 1]!,
    ...(fn ? { fn } : {}),
    ...(cls ? { cls } : {}),
    symbols: symbolsInScope(chain, offset, file.source),
  };
}
