/** Which function to write tests for: the one at the cursor, or `constraints.function` by name ("fn" or "Class.method"). */
import { AipError } from "../../protocol/contract/errors.js";
import {
  functionAtOffset,
  functionsOf,
  isClass,
  isFunction,
  sliceFunction,
  type FunctionSlice,
} from "../lib/code/cursor.js";
import type { Node, ParsedFile } from "../lib/code/parse.js";
import { forEachChild } from "../lib/code/walk.js";
import { lineAt, offsetAt, type Position } from "../lib/code/position.js";

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
  const importable =
    top !== undefined && (top === chain[index] || (top.type === "VariableDeclaration" && chain[index - 2] === top));
  return { slice, importable };
}

/** The function whose declaration is at the cursor (see functionAtOffset); AIP_ERR_INVALID_FIELD naming the nearest ones when there is none. */
export function targetAtCursor(file: ParsedFile, cursor: Position): Target {
  const offset = offsetAt(file.source, cursor);
  const fn = functionAtOffset(file.program, file.source, offset);
  if (!fn) {
    const near = functionsOf(file.program, file.source)
      .map((f) => ({ f, distance: offset < f.range[0] ? f.range[0] - offset : offset - f.range[1] }))
      .sort((a, b) => a.distance - b.distance)
      .slice(0, 3)
      .sort((a, b) => a.f.range[0] - b.f.range[0])
      .map(
        ({ f }) =>
          `${f.className !== undefined ? `${f.className}.` : ""}${f.name} (lines ${lineAt(file.source, f.range[0])}-${f.decl.loc.end.line})`,
      );
    throw new AipError(
      "AIP_ERR_INVALID_FIELD",
      `context.cursor: no function or method at line ${cursor.line}, column ${cursor.column}${near.length ? `; the nearest are ${near.join(", ")}` : "; the file declares no named function"}`,
      {
        suggestion:
          "Put the cursor on the function to test (its name, parameters or body), or name it in constraints.function",
        extensions: { errors: [{ path: "context.cursor", message: "not on a function" }] },
      },
    );
  }
  const chain = chainTo(file, fn);
  return judge(chain, chain.length - 1, file);
}

/** The ancestor chain of a sliced function, found by descending to it. */
function chainTo(file: ParsedFile, fn: FunctionSlice): Node[] {
  const chain: Node[] = [file.program];
  let node: Node | undefined = file.program;
  while (node && node !== fn.fn) {
    let next: Node | undefined;
    forEachChild(node, (c) => {
      if (!next && c.range[0] <= fn.fn.range[0] && fn.fn.range[1] <= c.range[1]) next = c;
    });
    node = next;
    if (node) chain.push(node);
  }
  return chain;
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
    throw new AipError(
      "AIP_ERR_INVALID_FIELD",
      `constraints.function: no function named ${JSON.stringify(name)}; the file defines ${names.slice(0, 20).join(", ") || "no named functions"}`,
      {
        extensions: { errors: [{ path: "constraints.function", message: "no such function" }] },
      },
    );
  }
  return best;
}
