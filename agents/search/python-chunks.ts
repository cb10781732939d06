/**
 * Search documents of a Python file, from the language layer's parse (tree-sitter is linear and fast
 * enough at index time): one per function, class and method with its docstring and signature as the
 * head, the module docstring as a "module" definition named after the file, and windows of the rest.
 */
import type { CodeLanguage, Declaration } from "../lib/code/languages/types.js";
import type { PythonDocument } from "../lib/code/languages/python/index.js";
import type { Chunk } from "./chunk.js";

const MAX_CHUNK_LINES = 60;
/**
 * Where a docstring's description ends, as a doc comment's ends at its first block tag: a doctest
 * (`>>>`), a section of the Google or NumPy style (`Args:`, `Parameters` over a dashed line), or a
 * reST field (`:param x:`, `.. note::`).
 */
const DOC_SECTION =
  /^\s*(?:>>>|(?:Args|Arguments|Parameters|Params|Returns?|Yields?|Raises|Examples?|Notes?|See Also|Warnings?|Attributes|References|Keyword Args|Other Parameters):\s*$|[:.][A-Za-z]|\.\.\s)|^\s*-{3,}\s*$/;

/** A docstring's description: its prose before the first doctest, section or field. */
export function descriptionOf(doc: string): string {
  const lines = doc.split("\n");
  let end = lines.findIndex((l) => DOC_SECTION.test(l));
  if (end === -1) end = lines.length;
  // a NumPy section title is the line above its dashes
  if (end > 0 && /^\s*-{3,}\s*$/.test(lines[end]!)) end--;
  return lines.slice(0, end).join("\n").trim();
}

function flatten(decls: readonly Declaration[], out: Declaration[] = []): Declaration[] {
  for (const d of decls) {
    if (d.kind === "function" || d.kind === "method" || d.kind === "class") {
      out.push(d);
      flatten(d.children, out);
    }
  }
  return out;
}

export function chunkPython(py: CodeLanguage<PythonDocument>, text: string, moduleName?: string): Chunk[] {
  const doc = py.parse(text);
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const declared = doc.exports.declared;
  const isPublic = (name: string): boolean => (declared ? declared.includes(name) : !name.startsWith("_"));
  const defs = flatten(doc.outline).sort((a, b) => a.line_start - b.line_start);
  // A definition's own lines: up to its first nested definition (a class's methods are their own documents).
  const owned: { d: Declaration; from: number; to: number }[] = defs.map((d, i) => {
    const next = defs[i + 1];
    const to = next && next.line_start <= d.line_end ? next.line_start - 1 : d.line_end;
    return { d, from: d.line_start, to: Math.max(d.line_start, to) };
  });
  const covered = new Uint8Array(lines.length + 2);
  const out: Chunk[] = [];
  const window = (from: number, to: number, first: Omit<Chunk, "line_start" | "line_end" | "text">): void => {
    for (let a = from; a <= to; a += MAX_CHUNK_LINES) {
      const b = Math.min(to, a + MAX_CHUNK_LINES - 1);
      const body = lines.slice(a - 1, b).join("\n");
      for (let l = a; l <= b; l++) covered[l] = 1;
      if (body.trim() === "") continue;
      out.push({ line_start: a, line_end: b, ...(a === from ? first : { kind: "text" }), text: body });
    }
  };
  for (const { d, from, to } of owned) {
    const description = descriptionOf(d.doc);
    const head = description ? `${description}\n${d.signature}` : d.signature;
    window(from, to, {
      symbol: d.name,
      kind: d.kind === "class" ? "class" : d.kind === "method" ? "method" : "function",
      head,
      ...(d.container === "" ? { exported: isPublic(d.name) } : {}),
    });
  }
  // The rest: module docstring (a definition of the module), constants, code between definitions.
  let start = 0;
  let first = true;
  for (let l = 1; l <= lines.length + 1; l++) {
    const free = l <= lines.length && covered[l] === 0;
    if (free && start === 0) start = l;
    if (!free && start !== 0) {
      const moduleDoc = first && start === 1 && doc.module_doc !== "" && moduleName !== undefined;
      window(start, l - 1, moduleDoc ? { symbol: moduleName, kind: "module", head: doc.module_doc } : { kind: "text" });
      start = 0;
      first = false;
    }
    if (!free) first = false;
  }
  return out.sort((a, b) => a.line_start - b.line_start);
}
