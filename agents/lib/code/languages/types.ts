/**
 * The operations every code agent uses, whatever the language (docs/architecture.md "Adding a
 * language"): a language parses a source into a `CodeDocument` of plain data, and answers outline,
 * declarations, the declaration at a cursor, imports, exports, search chunks and the names in scope
 * from it. Offsets are UTF-16 code units of the source; lines are 1-based.
 */
import type { ParseDiagnostic } from "../parse.js";

/** A language id as the registry knows it (one folder under languages/). */
export type LanguageId = "typescript" | "javascript" | "python";

export type DeclarationKind =
  "function" | "method" | "class" | "variable" | "constant" | "property" | "type" | "import";

export interface ParamInfo {
  name: string;
  type?: string;
  default?: string;
  /** positional (plain), positional_only (before `/`), keyword_only (after `*`), vararg (`*args`), kwarg (`**kw`). */
  kind: "positional" | "positional_only" | "keyword_only" | "vararg" | "kwarg";
}

export interface Declaration {
  name: string;
  kind: DeclarationKind;
  /** The dotted names of the enclosing classes and functions ("" at module level). */
  container: string;
  /** The declaration's extent, decorators included. */
  start: number;
  end: number;
  line_start: number;
  line_end: number;
  /** Offset of the name itself. */
  name_start: number;
  /** The header as written, whitespace collapsed (`async def f(a: int = 1) -> str`, `class A(B)`, `X: int`). */
  signature: string;
  /** The whole doc (docstring or doc comment), dedented. */
  doc: string;
  /** The doc's first sentence. */
  summary: string;
  decorators: string[];
  async?: boolean;
  params?: ParamInfo[];
  returns?: string;
  /** A class's bases (`Generic[T]`, `metaclass=M` as written). */
  bases?: string[];
  /** A variable's annotation, or its value's text for a constant. */
  type?: string;
  value?: string;
  /** For `import`: the module and the imported name (`from m import a as b` → from "m", imported "a"). */
  from?: string;
  imported?: string;
  /** Methods, nested classes and class attributes of a class; nested functions of a function. */
  children: Declaration[];
}

export interface ImportEntry {
  /** The module as written: `os.path`, `.x`, `..pkg.y`, `.` (Python); the specifier (TS). */
  from: string;
  /** Leading dots of a relative Python import (0 = absolute). */
  level: number;
  /** The names bound: `{ name: "b", imported: "a" }` for `a as b`; `*` for a star import; a plain `import m` binds the module. */
  names: { name: string; imported: string }[];
  star: boolean;
  /** True for `import m` / `import a.b as c` (the module itself is bound). */
  module: boolean;
  line: number;
  start: number;
  end: number;
}

export interface ExportsInfo {
  /** The module's declared export list (Python `__all__`), when it has one it could read. */
  declared?: string[];
  /** How `declared` was built, each form once (`=`, `+=`, `.extend`, `.append`, `+`). */
  forms: string[];
  /** Names assigned to the export list that are not literals (so `declared` may be incomplete). */
  dynamic: boolean;
  /** Public names without a declared list: top-level bindings not starting with `_` (Python's rule). */
  implicit: string[];
  line?: number;
}

export interface SearchChunk {
  name: string;
  kind: DeclarationKind;
  container: string;
  start: number;
  end: number;
  line_start: number;
  line_end: number;
  signature: string;
  doc: string;
  text: string;
}

export interface ScopeName {
  name: string;
  kind: "local" | "parameter" | "module" | "import" | "class" | "function" | "builtin" | "attribute";
  /** Where it is bound (1-based line); absent for builtins. */
  line?: number;
  /** The enclosing declaration's dotted name for locals and parameters. */
  scope?: string;
}

/** A parsed source: plain data, so it can be cached and shared with no parser state attached. */
export interface CodeDocument {
  language: LanguageId;
  source: string;
  /** Syntax errors the parser recovered from, in source order (empty for a clean buffer). */
  diagnostics: ParseDiagnostic[];
}

/** One language's implementation; every operation is synchronous once `load()` has resolved. */
export interface CodeLanguage<D extends CodeDocument = CodeDocument> {
  id: LanguageId;
  parse(source: string, filePath?: string): D;
  /** Top-level declarations, classes with their members as children. */
  outline(doc: D): Declaration[];
  /** Every declaration, nested ones included, in source order. */
  declarations(doc: D): Declaration[];
  /** The innermost function, method or class whose extent holds `offset`. */
  declarationAt(doc: D, offset: number, kinds?: readonly DeclarationKind[]): Declaration | undefined;
  imports(doc: D): ImportEntry[];
  exports(doc: D): ExportsInfo;
  chunks(doc: D): SearchChunk[];
  /** Names visible at `offset`, innermost scope first (no duplicates). */
  namesInScope(doc: D, offset: number): ScopeName[];
}
