/**
 * Python documents kept per editor document, re-read keystroke by keystroke from their last state:
 * tree-sitter's tree of the previous text is edited (`Tree.edit`) and parsed again, which re-parses only
 * what the edit touched; when the edit lies inside the body of one top-level function or class and the
 * rest of the module has no syntax errors, only that statement is read into plain data again (its own
 * errors repaired as `readPython` repairs them) and the rest of the previous document is moved by the
 * edit. Anything else (an edit between top-level statements, in a header, in `__all__`, errors
 * elsewhere) is read whole, as `readPython` reads it: either way the document equals `readPython`'s.
 *
 * Why: reading a whole tree out of WebAssembly costs far more than a keystroke may take on a file of a
 * few thousand lines, while most keystrokes change one function.
 */
import { changeOf, lineStarts, positionAt } from "../../position.js";
import type { Declaration, ImportEntry } from "../types.js";
import type { ParseDiagnostic } from "../../parse.js";
import {
  brokenSegment,
  HEADER,
  MAX_REPAIRS,
  readParsed,
  readPython,
  readTopLevel,
  syntaxErrors,
  type Binding,
  type PythonDocument,
  type Scope,
} from "./document.js";
import { parseTree, type SyntaxNode, type SyntaxTree } from "./parser.js";

/** Documents kept (least recently used dropped first; each holds a tree in wasm memory). */
export const MAX_PYTHON_DOCUMENTS = 16;

const DEFINITIONS = new Set(["function_definition", "class_definition", "decorated_definition"]);

/** The most diagnostics a document keeps (as `readPython`). */
const MAX_DIAGNOSTICS = 100;

interface Entry {
  source: string;
  /** A tree of `source` (undefined once edited for a text that then did not parse). */
  tree: SyntaxTree | undefined;
  doc: PythonDocument;
}

export interface PythonDocumentStats {
  hits: number;
  /** Re-read one top-level statement only. */
  partial: number;
  /** Re-parsed from the previous tree, then read whole. */
  reparsed: number;
  full: number;
  entries: number;
}

function point(starts: readonly number[], offset: number): { row: number; column: number } {
  const p = positionAt(offset, starts);
  return { row: p.line - 1, column: p.column };
}

function newlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n", from); i >= 0 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function shiftDecl(d: Declaration, by: number, lines: number): Declaration {
  return {
    ...d,
    start: d.start + by,
    end: d.end + by,
    name_start: d.name_start + by,
    line_start: d.line_start + lines,
    line_end: d.line_end + lines,
    children: d.children.map((c) => shiftDecl(c, by, lines)),
  };
}

function shiftBinding(b: Binding, by: number, lines: number): Binding {
  return { ...b, offset: b.offset + by, line: b.line + lines };
}

function shiftScope(s: Scope, by: number, lines: number): Scope {
  return {
    ...s,
    start: s.start + by,
    end: s.end + by,
    body_start: s.body_start + by,
    names: s.names.map((b) => shiftBinding(b, by, lines)),
  };
}

function shiftImport(i: ImportEntry, by: number, lines: number): ImportEntry {
  return { ...i, start: i.start + by, end: i.end + by, line: i.line + lines };
}

/** The body of a definition node (through its decorators). */
function bodyStart(node: SyntaxNode): number | undefined {
  const def = node.type === "decorated_definition" ? node.childForFieldName("definition") : node;
  return def?.childForFieldName("body")?.startIndex;
}

/** The top-level statement of `root` that starts at `start`. */
function topAt(root: SyntaxNode, start: number): SyntaxNode | undefined {
  return root.namedChildren.find((c): c is SyntaxNode => c !== null && c.startIndex === start);
}

/**
 * A tree of `source` whose syntax errors inside `node` are repaired as `readPython` repairs them (its
 * broken segments blanked, up to MAX_REPAIRS rounds), each round re-parsing only the blanked segment;
 * undefined when a repair would reach outside [`node`'s start, `limit`) or blank a top-level header.
 * The caller deletes it.
 */
function repairedTree(
  source: string,
  tree: SyntaxTree,
  node: SyntaxNode,
  limit: number,
  label?: string,
): SyntaxTree | undefined {
  const starts = lineStarts(source);
  let text = source;
  let t = tree.copy();
  for (let round = 0; round < MAX_REPAIRS && t.rootNode.hasError; round++) {
    const segment = brokenSegment(t.rootNode, text, starts);
    if (!segment) break;
    const [a, b] = segment;
    const cut = text.slice(a, b);
    if (a < node.startIndex || b > limit || [...cut.matchAll(HEADER)].some((m) => m[1] === "")) {
      t.delete();
      return undefined;
    }
    text = text.slice(0, a) + cut.replace(/[^\n]/g, " ") + text.slice(b);
    t.edit({
      startIndex: a,
      oldEndIndex: b,
      newEndIndex: b,
      startPosition: point(starts, a),
      oldEndPosition: point(starts, b),
      newEndPosition: point(starts, b),
    } as Parameters<SyntaxTree["edit"]>[0]);
    let next: SyntaxTree;
    try {
      next = parseTree(text, label, t);
    } finally {
      t.delete();
    }
    t = next;
  }
  return t;
}

/**
 * The previous document with one top-level definition re-read: undefined when the edit
 * [start, newEnd) is not inside one definition's body, or the rest of the module may read differently
 * (then the caller reads the whole text).
 */
function splice(
  prev: PythonDocument,
  source: string,
  tree: SyntaxTree,
  change: { start: number; oldEnd: number; newEnd: number },
  label?: string,
): PythonDocument | undefined {
  const { start, oldEnd, newEnd } = change;
  const by = newEnd - oldEnd;
  const root = tree.rootNode;
  const top = root.namedChildren.filter((c): c is SyntaxNode => c !== null);
  const at = top.findIndex((c) => c.startIndex <= start && newEnd < c.endIndex);
  const node = top[at];
  if (!node || !DEFINITIONS.has(node.type)) return undefined;
  // Errors elsewhere are repaired by blanking whole statements, which may change what the edit reads.
  if (top.some((c) => c !== node && (c.hasError || c.isError))) return undefined;
  const body = bodyStart(node);
  if (body === undefined || start < body) return undefined;
  // The definition's region runs to the next top-level statement (a repaired one may end earlier).
  const limit = top[at + 1]?.startIndex ?? source.length;
  const oldLimit = limit - by;
  // The same definition, moved by the edit only: the statements around it are the same ones.
  const index = prev.outline.findIndex((d) => d.start === node.startIndex);
  const old = prev.outline[index];
  if (!old || old.end > oldLimit || oldEnd > oldLimit || (prev.outline[index + 1]?.start ?? Infinity) < oldLimit)
    return undefined;
  let diagnostics: ParseDiagnostic[] = [];
  let read = node;
  let repaired: SyntaxTree | undefined;
  try {
    if (node.hasError) {
      diagnostics = syntaxErrors(source, node);
      repaired = repairedTree(source, tree, node, limit, label);
      const again = repaired && topAt(repaired.rootNode, node.startIndex);
      if (!again || again.endIndex > limit || again.type !== node.type) return undefined;
      read = again;
    }
    const part = readTopLevel(source, read);
    if (part.irregular || part.decls.length !== 1 || part.decls[0]!.name !== old.name) return undefined;
    const known = new Set(prev.bindings.map((b) => b.name));
    if (part.bindings.some((b) => !known.has(b.name))) return undefined;
    const lines = newlines(source, start, newEnd) - newlines(prev.source, start, oldEnd);
    const moved = <T extends { start: number }>(xs: readonly T[], shift: (x: T, by: number, lines: number) => T) =>
      xs.filter((x) => x.start >= oldLimit).map((x) => shift(x, by, lines));
    const outside = <T extends { start: number; end: number }>(x: T) => x.end <= old.start;
    const kept = [
      ...prev.diagnostics.filter((d) => d.start < old.start),
      ...diagnostics,
      ...prev.diagnostics.filter((d) => d.start >= oldLimit).map((d) => ({ ...d, start: d.start + by })),
    ];
    if (kept.length >= MAX_DIAGNOSTICS) return undefined;
    return {
      ...prev,
      source,
      diagnostics: kept.sort((x, y) => x.start - y.start),
      lines: prev.lines + lines,
      outline: [
        ...prev.outline.slice(0, index),
        part.decls[0]!,
        ...prev.outline.slice(index + 1).map((d) => shiftDecl(d, by, lines)),
      ],
      scopes: [...prev.scopes.filter(outside), ...part.scopes, ...moved(prev.scopes, shiftScope)].sort(
        (x, y) => x.start - y.start,
      ),
      imports: [...prev.imports.filter(outside), ...part.imports, ...moved(prev.imports, shiftImport)],
      bindings: prev.bindings.map((b) => (b.offset >= oldLimit ? shiftBinding(b, by, lines) : b)),
      exports:
        prev.exports.line !== undefined && prev.exports.line > old.line_end
          ? { ...prev.exports, line: prev.exports.line + lines }
          : prev.exports,
    };
  } finally {
    repaired?.delete();
  }
}

/**
 * Documents by editor document (the key: `document_id`, else the file). `get` answers the document of
 * a text, from the key's previous one when it can; a text that does not parse in time throws
 * AIP_ERR_PARSE as `readPython` does, and the key keeps its last good document (`last`).
 */
export class PythonDocuments {
  private readonly entries = new Map<string, Entry>();
  private readonly counts = { hits: 0, partial: 0, reparsed: 0, full: 0 };

  constructor(private readonly maxEntries = MAX_PYTHON_DOCUMENTS) {}

  /** The last document read for `key`, if any (for an answer when the current text cannot be parsed). */
  last(key: string): PythonDocument | undefined {
    return this.entries.get(key)?.doc;
  }

  get(key: string, source: string, label?: string): PythonDocument {
    const prev = this.entries.get(key);
    if (prev?.source === source) {
      this.touch(key, prev);
      this.counts.hits++;
      return prev.doc;
    }
    let tree: SyntaxTree;
    let change: ReturnType<typeof changeOf> | undefined;
    if (prev?.tree) {
      change = changeOf(prev.source, source);
      const oldStarts = lineStarts(prev.source);
      const newStarts = lineStarts(source);
      prev.tree.edit({
        startIndex: change.start,
        oldEndIndex: change.oldEnd,
        newEndIndex: change.newEnd,
        startPosition: point(oldStarts, change.start),
        oldEndPosition: point(oldStarts, change.oldEnd),
        newEndPosition: point(newStarts, change.newEnd),
      } as Parameters<SyntaxTree["edit"]>[0]);
      try {
        tree = parseTree(source, label, prev.tree);
      } finally {
        // The edited tree no longer describes the previous text: the entry keeps its document only.
        prev.tree.delete();
        prev.tree = undefined;
      }
    } else tree = parseTree(source, label);
    let doc: PythonDocument | undefined;
    try {
      if (prev && change) doc = splice(prev.doc, source, tree, change, label);
      if (doc) this.counts.partial++;
      else {
        const root = tree.rootNode;
        doc = root.hasError ? readPython(source, label) : readParsed(source, root);
        this.counts[change ? "reparsed" : "full"]++;
      }
    } catch (err) {
      tree.delete();
      throw err;
    }
    this.touch(key, { source, tree, doc });
    return doc;
  }

  stats(): PythonDocumentStats {
    return { ...this.counts, entries: this.entries.size };
  }

  /** Drop every document (and free its tree). */
  clear(): void {
    for (const e of this.entries.values()) e.tree?.delete();
    this.entries.clear();
  }

  private touch(key: string, entry: Entry): void {
    const old = this.entries.get(key);
    if (old && old !== entry) old.tree?.delete();
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) {
      const [k, e] = this.entries.entries().next().value as [string, Entry];
      e.tree?.delete();
      this.entries.delete(k);
    }
  }
}
