/** Which function to write tests for: the one at the cursor, or `constraints.function` by name ("fn" or "Class.method"). */
import { AipError } from "../../protocol/errors.js";
import { isClass, isFunction, sliceFunction, type FunctionSlice } from "../code/cursor.js";
import type { Node, ParsedFile } from "../code/parse.js";
import { sliceAt } from "../code/slice.js";
import { forEachChild } from "../code/walk.js";
import type { Position } from "../code/position.js";

export interface Target {
  slice: FunctionSlice;
  /** Top-level function, or a method of a top-level class: something a test can import. */
  importable: boolean;
  /** The top-level class of a method, with its constructor. */
  cls?: Node;
}

function topLevelOf(chain: Node[]): Node | undefined {
  const top = chain[1];
  if (top && (top.type === "ExportNamedDeclaration" || top.type === "ExportDefaultDeclaration")) return chain[2];
  return top;
}

function judge(chain: Node[], index: number, file: ParsedFile): Target {
  const slice = sliceFunction(chain, index, file.program, file.source);
  const top = topLevelOf(chain);
  if (slice.className !== undefined) {
    const clsIdx = index - 3;
    const cls = chain[clsIdx];
    const importable = clsIdx >= 1 && cls === top && cls !== undefined && isClass(cls);
    return { slice, importable, ...(cls ? { cls } : {}) };
  }
  // A top-level function: `function f`, or `const f = () => …`.
  const importable = top !== undefined && (top === chain[index] || (top.type === "VariableDeclaration" && chain[index - 2] === top));
  return { slice, importable };
}

/** The function at the cursor; AIP_ERR_INVALID_FIELD when the cursor is not in one. */
export function targetAtCursor(file: ParsedFile, cursor: Position): Target {
  const s = sliceAt(file, cursor);
  if (!s.fn) {
    throw new AipError("AIP_ERR_INVALID_FIELD", `context.cursor: no function or method at line ${cursor.line}, column ${cursor.column}`, {
      suggestion: "Put the cursor inside the function to test, or name it in constraints.function",
      extensions: { errors: [{ path: "context.cursor", message: "not inside a function" }] },
    });
  }
  return judge(s.chain, s.chain.indexOf(s.fn.fn), file);
}

/** The function named `name` ("fn" or "Class.method"); AIP_ERR_INVALID_FIELD listing what exists when absent. */
export function targetByName(file: ParsedFile, name: string): Target {
  const found: Target[] = [];
  const names: string[] = [];
  const chain: Node[] = [];
  const visit = (node: Node): void => {
    chain.push(node);
    if (isFunction(node) && chain.length >= 2 && node.type !== "TSDeclareFunction") {
      const t = judge([...chain], chain.length - 1, file);
      const full = t.slice.className !== undefined ? `${t.slice.className}.${t.slice.name}` : t.slice.name;
      if (t.slice.name !== "<anonymous>") names.push(full);
      if (full === name || (t.slice.className !== undefined && t.slice.name === name)) found.push(t);
    }
    forEachChild(node, visit);
    chain.pop();
  };
  visit(file.program);
  const best = found.find((t) => t.importable) ?? found[0];
  if (!best) {
    throw new AipError("AIP_ERR_INVALID_FIELD", `constraints.function: no function named ${JSON.stringify(name)}; the file defines ${names.slice(0, 20).join(", ") || "no named functions"}`, {
      extensions: { errors: [{ path: "constraints.function", message: "no such function" }] },
    });
  }
  return best;
}
