/**
 * complete-lite on Python (docs/agents.md, "Python completion"): pyright's answer when a workspace file
 * is named and the checker answers within the budget (`engine: "typed"`), re-ranked by the buffer's use
 * of each name; the syntactic engine's otherwise (`engine: "syntactic"` with `engine_reason`). A buffer
 * that does not parse still gets completions, with `partial: true` and its diagnostics.
 */
import { actionInput } from "../../../../protocol/contract/actions.js";
import type { AipRequest } from "../../../../protocol/contract/schemas.js";
import { loadLanguage } from "../../code/languages/registry.js";
import type { PythonDocument } from "../../code/languages/python/index.js";
import { PythonDocuments } from "../../code/languages/python/incremental.js";
import { AipError } from "../../../../protocol/contract/errors.js";
import { reportDiagnostics } from "../../code/parse.js";
import { PLACEHOLDER } from "../../code/placeholder.js";
import { lineStarts, offsetAt, positionAt } from "../../code/position.js";
import { readRequestIn } from "../../code/source.js";
import type { HandlerContext } from "../../runtime/types.js";
import { TYPED_LIMITS } from "../engine.js";
import { prefixAt } from "../typed.js";
import { memberUse } from "./member-use.js";
import { LSP_KINDS, type PyrightEngine } from "./pyright.js";
import { pythonCompletions, type TypedCandidate } from "./syntactic.js";

/** Time kept back from the deadline for the syntactic answer when the checker is asked first (as for TypeScript). */
const SYNTACTIC_RESERVE_SHARE = 0.4;
const SYNTACTIC_RESERVE_MS = 100;

/** True when a request is about Python: `context.language`, else the file's extension. */
export function isPythonRequest(request: AipRequest): boolean {
  const { language, file_path: filePath } = request.context;
  if (language !== undefined) return /^(python|py)$/i.test(language);
  return filePath !== undefined && /\.pyi?$/i.test(filePath);
}

/** The documents editors are typing in, re-read from their last state keystroke by keystroke (one set per process). */
export const pythonDocuments = new PythonDocuments();

/**
 * A document of `source` with no structure, for a buffer the parser gave up on: completion falls back to
 * the names the buffer uses near the cursor (a token scan), builtins and keywords.
 */
export function unparsedDocument(source: string): PythonDocument {
  return {
    language: "python",
    source,
    diagnostics: [],
    module_doc: "",
    outline: [],
    imports: [],
    exports: { forms: [], dynamic: false, implicit: [], references: [] },
    bindings: [],
    scopes: [],
    lines: source.split("\n").length,
  };
}

/**
 * The document of a buffer to complete in. When the parser fails or runs out of time (a huge or
 * hostile buffer, a loaded machine), the document's last good state, else a token scan, with the reason.
 */
export async function completionDocument(
  source: string,
  label: string | undefined,
  key: string,
  documents: Pick<PythonDocuments, "get" | "last"> = pythonDocuments,
): Promise<{ doc: PythonDocument; fallback?: string }> {
  await loadLanguage("python");
  try {
    return { doc: documents.get(key, source, label) };
  } catch (err) {
    if (!(err instanceof AipError) || err.code !== "AIP_ERR_PARSE") throw err;
    const last = documents.last(key);
    return last
      ? { doc: { ...last, source, diagnostics: [] }, fallback: `${err.message}: scopes from the document's last parse` }
      : { doc: unparsedDocument(source), fallback: `${err.message}: names from a token scan` };
  }
}

/** The key of the editor document a request is about: its `document_id` (per client), else its file. */
export function documentKey(request: AipRequest, absPath?: string): string {
  const c = request.constraints as { document_id?: unknown; client_id?: unknown } | undefined;
  if (typeof c?.document_id === "string") return `id:${String(c.client_id ?? "")}:${c.document_id}`;
  return `file:${absPath ?? request.context.file_path ?? ""}`;
}

/** The complete action on a Python buffer. */
export async function completePython(
  request: AipRequest,
  ctx: HandlerContext,
  pyright: PyrightEngine | undefined,
): Promise<unknown> {
  const constraints = actionInput("complete", request).constraints;
  const limit = constraints.max_items ?? 50;
  // The parser (WebAssembly, compiled on first use) loads while the request is read and the checker
  // is asked: a first request pays for the slower of the two, not for both.
  loadLanguage("python").catch(() => undefined);
  const loc = await readRequestIn(request, ["python"]);
  const source = loc.text;
  const starts = lineStarts(source);
  const cursor = request.context.cursor ?? positionAt(source.length, starts);
  const offset = offsetAt(source, cursor, starts);
  let engineReason = "no workspace_root and file_path: the checker needs a workspace";
  let fallbacks: string[] = [];
  let typed: TypedCandidate[] | undefined;
  if (pyright && loc.root !== undefined && loc.absPath !== undefined && /\.pyi?$/i.test(loc.absPath)) {
    const room = ctx.remainingMs() - Math.max(SYNTACTIC_RESERVE_MS, SYNTACTIC_RESERVE_SHARE * ctx.remainingMs());
    const { afterDot } = prefixAt(source, offset);
    const budget = Math.min(
      constraints.typed_wait_ms ?? (afterDot ? TYPED_LIMITS.budgetMs : TYPED_LIMITS.identifierBudgetMs),
      room,
    );
    const r =
      budget > 0
        ? await pyright.complete(
            { root: loc.root, path: loc.absPath, text: source, line: cursor.line - 1, character: cursor.column },
            budget,
            ctx.log,
            constraints.typed_wait_ms !== undefined,
          )
        : { reason: "no time left for the checker", fallback: [] };
    ctx.timer.mark("typed");
    fallbacks = r.fallback;
    if ("items" in r && r.items.length > 0) {
      typed = r.items.map((i) => ({ label: i.label, kind: LSP_KINDS[i.kind] ?? "text", detail: i.detail ?? "" }));
    } else engineReason = "items" in r ? "the checker offered nothing here" : r.reason;
  }
  // The name being typed is completed with a placeholder (`self.` + newline does not parse): the
  // statement is whole and the class or function around the cursor keeps its extent.
  const { doc, fallback: parseFallback } = await completionDocument(
    source.slice(0, offset) + PLACEHOLDER + source.slice(offset),
    loc.displayPath ?? request.context.file_path,
    documentKey(request, loc.absPath),
  );
  if (parseFallback !== undefined) {
    fallbacks = [...fallbacks, parseFallback];
    engineReason = parseFallback;
  }
  ctx.timer.mark("parse");
  const answer = pythonCompletions(doc, offset, {
    root: loc.root,
    file: loc.absPath,
    limit,
    ...(typed ? { typed } : {}),
    memberUse: loc.root !== undefined ? memberUse.peek(loc.root) : undefined,
  });
  ctx.timer.mark("complete");
  // Reported against the buffer as sent: a diagnostic past the cursor moves back by the placeholder.
  const diagnostics =
    doc.diagnostics.length > 0
      ? reportDiagnostics(
          {
            source,
            diagnostics: doc.diagnostics.map((d) => ({
              ...d,
              start: d.start > offset ? Math.max(offset, d.start - PLACEHOLDER.length) : d.start,
            })),
          },
          starts,
        )
      : [];
  return {
    ...(typed ? { engine: "typed" } : { engine: "syntactic", engine_reason: engineReason }),
    ...(fallbacks.length > 0 ? { fallbacks } : {}),
    items: answer.items,
    prefix: answer.prefix,
    context: answer.context === "member" ? "member" : "identifier",
    ...(answer.receiver !== undefined ? { receiver: answer.receiver, receiver_kind: answer.receiver_kind } : {}),
    replace: { start: positionAt(answer.start, starts), end: cursor },
    ...(diagnostics.length > 0 ? { partial: true, diagnostics } : {}),
  };
}
