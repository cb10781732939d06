/**
 * agent-complete's Python part (docs/agents.md, "Python completion"; language.ts): the enclosing
 * function sliced from the tree-sitter document, a symbol table of the module (imports, functions,
 * classes, constants) and the names in scope in the prompt, and a tree-sitter syntax gate on the
 * completed region. handler.ts runs the shared stages; when the model is unavailable, fails, or no
 * attempt passes the gate, complete-lite answers (`engine: "lite"`, `engine_reason` says why): never an
 * error for those.
 */
import { isAipError } from "../../protocol/contract/errors.js";
import type { FunctionSlice } from "../lib/code/cursor.js";
import { python, type PythonDocument } from "../lib/code/languages/python/index.js";
import { partialFields } from "../lib/code/parse.js";
import { offsetAt, positionAt } from "../lib/code/position.js";
import { readRequestIn } from "../lib/code/source.js";
import { completionDocument, documentKey } from "../lib/completion/python/handler.js";
import { codeContext } from "./context.js";
import type { CheckResult } from "./check.js";
import type { CompletionLanguage, Sliced } from "./language.js";

/** The module's symbol table as prompt comment lines: imports, classes, functions, constants. */
export function pythonSymbolsBlock(doc: PythonDocument): string {
  const lines: string[] = [];
  for (const imp of doc.imports) {
    const names = imp.names.map((n) => (n.name === n.imported ? n.name : `${n.imported} as ${n.name}`)).join(", ");
    lines.push(imp.module ? `import ${names}` : `from ${imp.from} import ${imp.star ? "*" : names}`);
  }
  for (const d of doc.outline) {
    if (d.kind === "import") continue;
    if (d.kind === "class") {
      lines.push(d.signature);
      for (const m of d.children.slice(0, 20)) lines.push(`    ${m.signature}`);
    } else lines.push(d.signature);
  }
  if (lines.length === 0) return "";
  return `# CURRENT_SYMBOLS\n${lines.map((l) => `# ${l}\n`).join("")}# END_SYMBOLS\n`;
}

/**
 * The syntax gate: the completion spliced in at the cursor, the buffer parsed again, and no syntax error
 * in the completed region (from the line the cursor is on to the end of the completion's last line)
 * that the buffer did not already have there.
 */
export function checkPython(source: string, offset: number, text: string, before: PythonDocument): CheckResult {
  const spliced = source.slice(0, offset) + text + source.slice(offset);
  const regionStart = source.lastIndexOf("\n", offset - 1) + 1;
  const endNl = spliced.indexOf("\n", offset + text.length);
  const regionEnd = endNl < 0 ? spliced.length : endNl;
  let doc: PythonDocument;
  try {
    doc = python.parse(spliced) as PythonDocument;
  } catch (err) {
    return {
      ok: false,
      parsed: false,
      formatted: false,
      error: (err as Error).message,
      score: 0,
      region: "statement",
      checked_chars: 0,
    };
  }
  const had = new Set(before.diagnostics.filter((d) => d.start < regionStart).map((d) => d.start));
  const bad = doc.diagnostics.find((d) => d.start >= regionStart && d.start <= regionEnd && !had.has(d.start));
  return {
    ok: bad === undefined,
    parsed: true,
    formatted: false,
    ...(bad ? { error: bad.message } : {}),
    score: bad ? Math.max(0, bad.start - offset) : text.length + 1,
    region: "statement",
    checked_chars: regionEnd - regionStart,
  };
}

/** A Python buffer at the cursor: its document (tree-sitter) from the editor's last state. */
export interface PythonSliced extends Sliced {
  doc: PythonDocument;
}

/** Python: the tree-sitter document, its symbol table, the tree-sitter gate; complete-lite answers whenever the model cannot. */
export const pythonCompletion: CompletionLanguage<PythonSliced> = {
  read: async (request) => {
    const loc = await readRequestIn(request, ["python"]);
    return { source: loc.text, loc };
  },
  slice: async (request, source, starts, loc) => {
    const cursor = request.context.cursor ?? positionAt(source.length, starts);
    const offset = offsetAt(source, cursor, starts);
    // The editor's document from its last state; a buffer the parser gives up on is still sliced (by a
    // token scan), never an error.
    const { doc } = await completionDocument(
      source,
      loc.displayPath ?? request.context.file_path,
      documentKey(request, loc.absPath),
    );
    const fn = python.declarationAt(doc, offset, ["function", "method"]);
    const code = codeContext(source, offset, fn ? ({ range: [fn.start, fn.end] } as FunctionSlice) : undefined, starts);
    return { source, starts, loc, cursor, offset, code, doc };
  },
  prompt: ({ loc, doc, offset }) => {
    const local = python
      .namesInScope(doc, offset)
      .filter((n) => n.kind === "local" || n.kind === "parameter")
      .map((n) => n.name);
    return {
      header: `# Language: python\n${loc.displayPath !== undefined ? `# File: ${loc.displayPath}\n` : ""}`,
      symbols: pythonSymbolsBlock(doc),
      locals: local.length ? `# LOCAL_SYMBOLS: ${local.join(", ").slice(0, 400)}\n` : "",
    };
  },
  gate: ({ source, offset, doc }) => ({
    dialect: { language: "typescript", jsx: false }, // unused: the check below replaces the splice check
    base: undefined,
    check: (text: string) => checkPython(source, offset, text, doc),
  }),
  partial: ({ doc, starts }) => partialFields(doc, starts),
  liteReason: (why) => {
    switch (why.reason) {
      case "no_model":
        return why.status === "none" || why.status === "failed" ? `no model: ${why.detail}` : why.detail;
      case "circuit_open":
        return `the model failed: ${why.detail}`;
      case "engine_error":
        return `the model failed: ${isAipError(why.error) ? why.error.code : "error"}: ${(why.error as Error).message}`;
      case "syntax_gate":
        return `the completion failed the syntax gate after ${why.retries} retries`;
    }
  },
};
