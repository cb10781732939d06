/** Python behind the language interface (languages/types.ts), parsed by tree-sitter (parser.ts, document.ts). */
import type { CodeLanguage, Declaration, DeclarationKind, ScopeName, SearchChunk } from "../types.js";
import { readPython, type PythonDocument } from "./document.js";
import { loadPythonParser } from "./parser.js";

export type { PythonDocument } from "./document.js";

/** The builtins every Python module sees (the names `builtins` defines that code calls). */
export const PYTHON_BUILTINS: readonly string[] = [
  "abs",
  "aiter",
  "all",
  "anext",
  "any",
  "ascii",
  "bin",
  "bool",
  "breakpoint",
  "bytearray",
  "bytes",
  "callable",
  "chr",
  "classmethod",
  "compile",
  "complex",
  "delattr",
  "dict",
  "dir",
  "divmod",
  "enumerate",
  "eval",
  "exec",
  "filter",
  "float",
  "format",
  "frozenset",
  "getattr",
  "globals",
  "hasattr",
  "hash",
  "help",
  "hex",
  "id",
  "input",
  "int",
  "isinstance",
  "issubclass",
  "iter",
  "len",
  "list",
  "locals",
  "map",
  "max",
  "memoryview",
  "min",
  "next",
  "object",
  "oct",
  "open",
  "ord",
  "pow",
  "print",
  "property",
  "range",
  "repr",
  "reversed",
  "round",
  "set",
  "setattr",
  "slice",
  "sorted",
  "staticmethod",
  "str",
  "sum",
  "super",
  "tuple",
  "type",
  "vars",
  "zip",
  "None",
  "True",
  "False",
  "NotImplemented",
  "Ellipsis",
  "__name__",
  "__file__",
  "__doc__",
  "ArithmeticError",
  "AssertionError",
  "AttributeError",
  "BaseException",
  "Exception",
  "ImportError",
  "IndexError",
  "KeyError",
  "KeyboardInterrupt",
  "LookupError",
  "NameError",
  "NotImplementedError",
  "OSError",
  "OverflowError",
  "RecursionError",
  "RuntimeError",
  "StopIteration",
  "StopAsyncIteration",
  "SyntaxError",
  "SystemExit",
  "TypeError",
  "UnicodeDecodeError",
  "UnicodeEncodeError",
  "UnicodeError",
  "ValueError",
  "ZeroDivisionError",
  "FileNotFoundError",
  "PermissionError",
  "TimeoutError",
  "DeprecationWarning",
  "UserWarning",
  "Warning",
  "RuntimeWarning",
  "FutureWarning",
];

/** Every declaration in source order, nested ones included. */
function flatten(decls: readonly Declaration[], out: Declaration[] = []): Declaration[] {
  for (const d of decls) {
    out.push(d);
    flatten(d.children, out);
  }
  return out;
}

const SCOPED: readonly DeclarationKind[] = ["function", "method", "class"];

/** The most characters of a declaration's text a search chunk keeps. */
const MAX_CHUNK_TEXT = 4000;

export const python: CodeLanguage<PythonDocument> & { load(): Promise<unknown> } = {
  id: "python",
  load: loadPythonParser,
  parse: (source, filePath) => readPython(source, filePath),
  outline: (doc) => doc.outline,
  declarations: (doc) => flatten(doc.outline).sort((a, b) => a.start - b.start),
  declarationAt(doc, offset, kinds = SCOPED) {
    let best: Declaration | undefined;
    for (const d of flatten(doc.outline)) {
      if (!kinds.includes(d.kind) || offset < d.start || offset > d.end) continue;
      if (!best || d.end - d.start <= best.end - best.start) best = d;
    }
    return best;
  },
  imports: (doc) => doc.imports,
  exports: (doc) => doc.exports,
  chunks(doc) {
    const out: SearchChunk[] = [];
    for (const d of flatten(doc.outline)) {
      if (d.kind !== "function" && d.kind !== "method" && d.kind !== "class") continue;
      out.push({
        name: d.name,
        kind: d.kind,
        container: d.container,
        start: d.start,
        end: d.end,
        line_start: d.line_start,
        line_end: d.line_end,
        signature: d.signature,
        doc: d.doc,
        text: doc.source.slice(d.start, Math.min(d.end, d.start + MAX_CHUNK_TEXT)),
      });
    }
    return out;
  },
  namesInScope(doc, offset) {
    const out: ScopeName[] = [];
    const seen = new Set<string>();
    const add = (n: ScopeName): void => {
      if (seen.has(n.name)) return;
      seen.add(n.name);
      out.push(n);
    };
    // Innermost first. A class body's names are visible in the body itself, not in its methods.
    const enclosing = doc.scopes
      .filter((s) => offset >= s.body_start && offset <= s.end)
      .sort((a, b) => b.start - a.start);
    enclosing.forEach((s, i) => {
      if (s.kind === "class" && i > 0) return;
      for (const b of s.names) add({ name: b.name, kind: b.kind, line: b.line, scope: s.name });
    });
    for (const b of doc.bindings) add({ name: b.name, kind: b.kind, line: b.line });
    for (const name of PYTHON_BUILTINS) add({ name, kind: "builtin" });
    return out;
  },
};
