/**
 * `aip lsp`'s diagnostics (docs/integrations.md): each open document is diagnosed by the agency's
 * `diagnose` action shortly after it opens or changes, the errors are published, and the verified
 * fixes of the last answer are offered as quick fixes, from that answer (no new request per
 * code-action request). A long file's answer after an edit covers its edited region first
 * (coverage "region"): it is published at once, with the errors published before outside that
 * region kept, and the whole file's answer is asked for next and published when it comes.
 */
import { join, sep } from "node:path";
import { pathToFileURL } from "node:url";
import type { TextDocument } from "vscode-languageserver-textdocument";
import {
  CodeActionKind,
  DiagnosticSeverity,
  type CancellationToken,
  type CodeAction,
  type CodeActionParams,
  type Connection,
  type Diagnostic,
  type TextDocuments,
  type WorkspaceEdit,
} from "vscode-languageserver/node";
import type { z } from "zod";
import type { DiagnosePayloadSchema } from "../../protocol/contract/actions.js";
import type { Answer } from "./agency.js";

type Json = Record<string, unknown>;
type DiagnosePayload = z.output<typeof DiagnosePayloadSchema>;

/** How long after the last change a document is diagnosed (a pause in typing). */
export const DIAGNOSE_DEBOUNCE_MS = 300;
/** How soon a document is diagnosed again when its workspace's checker was still loading. */
const DIAGNOSE_RETRY_MS = 1000;
/** The deadline of one diagnosis: the first on a workspace loads its checker. */
const DIAGNOSE_TIMEOUT_MS = 15_000;
/** How long the fixes left unchecked may take to check when a code action asks for them. */
const QUICK_FIX_CHECK_MS = 10_000;

const NEVER: CancellationToken = {
  isCancellationRequested: false,
  onCancellationRequested: () => ({ dispose: () => undefined }),
};

const toLsp = (p: { line: number; column: number }) => ({ line: p.line - 1, character: p.column });

export interface DiagnosticsOptions {
  connection: Connection;
  documents: TextDocuments<TextDocument>;
  contextOf: (d: TextDocument) => Json;
  call: (
    uri: string,
    action: string,
    context: Json,
    constraints: Json,
    token: CancellationToken,
  ) => Promise<Answer<DiagnosePayload>>;
}

/**
 * The diagnostics to publish for `payload`: its own; with coverage "region", also those published
 * `before` outside the checked ranges (they were not checked again): the ones after the region moved
 * by the lines the edit added or removed.
 */
export function shownWith(
  before: { lines: number; diagnostics: Diagnostic[] } | undefined,
  lines: number,
  payload: Pick<DiagnosePayload, "diagnostics" | "coverage" | "checked_ranges">,
): Diagnostic[] {
  const own: Diagnostic[] = payload.diagnostics.map((x) => ({
    range: { start: toLsp(x.range.start), end: toLsp(x.range.end) },
    severity: x.severity === "warning" ? DiagnosticSeverity.Warning : DiagnosticSeverity.Error,
    code: x.code,
    source: "aip diagnose",
    message: x.message,
  }));
  const ranges = payload.checked_ranges;
  if (payload.coverage !== "region" || !ranges?.length || !before) return own;
  // Lines (0-based, of the document now) from the region's first to its last.
  const first = Math.min(...ranges.map((r) => r.start.line - 1));
  const lastLine = Math.max(...ranges.map((r) => r.end.line - 1));
  const delta = lines - before.lines;
  const kept: Diagnostic[] = [];
  for (const x of before.diagnostics) {
    // Outside the region (a span wholly checked again lists its own errors), with the syntax errors
    // left to the new answer, which has all of the file's.
    if (x.code === "syntax" || /^TS1\d{3}$/.test(String(x.code))) continue;
    if (x.range.end.line < first) kept.push(x);
    else if (x.range.start.line > lastLine - delta) {
      const move = (p: { line: number; character: number }) => ({ line: p.line + delta, character: p.character });
      kept.push({ ...x, range: { start: move(x.range.start), end: move(x.range.end) } });
    }
  }
  return [...kept, ...own];
}

/** Publish diagnostics for open documents; returns the quick fixes for a code-action request. */
export function serveDiagnostics({ connection, documents, contextOf, call }: DiagnosticsOptions): {
  quickFixes: (params: CodeActionParams, token: CancellationToken) => Promise<CodeAction[]>;
} {
  /** Per document: the version diagnosed, its root and the answer. */
  const last = new Map<string, { version: number; root: string; payload: DiagnosePayload }>();
  /** Per document: what was published last, and the document's line count then. */
  const published = new Map<string, { lines: number; diagnostics: Diagnostic[] }>();
  const timers = new Map<string, NodeJS.Timeout>();

  async function diagnose(d: TextDocument, constraints: Json = { coverage: "auto" }): Promise<void> {
    const ctx = contextOf(d);
    if (ctx.workspace_root === undefined) return;
    let answer: Answer<DiagnosePayload>;
    try {
      answer = await call(d.uri, "diagnose", ctx, { timeout_ms: DIAGNOSE_TIMEOUT_MS, ...constraints }, NEVER);
    } catch {
      return; // cancelled by a newer version, or no agency: the next change tries again
    }
    if (!answer.ok || documents.get(d.uri)?.version !== d.version) return;
    const root = ctx.workspace_root as string;
    last.set(d.uri, { version: d.version, root, payload: answer.payload });
    const diagnostics = shownWith(published.get(d.uri), d.lineCount, answer.payload);
    published.set(d.uri, { lines: d.lineCount, diagnostics });
    await connection.sendDiagnostics({ uri: d.uri, version: d.version, diagnostics });
    // The edited region's answer: the whole file's next, waiting for the check the agent began after it.
    if (answer.payload.coverage === "region")
      return diagnose(d, { coverage: "file", check_wait_ms: DIAGNOSE_TIMEOUT_MS - 1000 });
    // The workspace's checker was still loading (the parser answered alone), or the fixes' checks ran
    // past their budget (the agent keeps the checks made): asked again, for the rest.
    const unchecked = (answer.payload as { fixes_unchecked?: number }).fixes_unchecked ?? 0;
    if ((answer.payload.engine === "syntax" && /loading/.test(answer.payload.engine_reason ?? "")) || unchecked > 0)
      timers.set(
        d.uri,
        setTimeout(() => {
          timers.delete(d.uri);
          if (documents.get(d.uri)?.version === d.version) void diagnose(d);
        }, DIAGNOSE_RETRY_MS),
      );
  }

  const schedule = (d: TextDocument): void => {
    clearTimeout(timers.get(d.uri));
    timers.set(
      d.uri,
      setTimeout(() => {
        timers.delete(d.uri);
        void diagnose(d);
      }, DIAGNOSE_DEBOUNCE_MS),
    );
  };
  documents.onDidChangeContent((e) => schedule(e.document));
  documents.onDidClose((e) => {
    clearTimeout(timers.get(e.document.uri));
    timers.delete(e.document.uri);
    last.delete(e.document.uri);
    published.delete(e.document.uri);
    void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
  });

  return {
    async quickFixes(params, token) {
      let entry = last.get(params.textDocument.uri);
      const d = documents.get(params.textDocument.uri);
      if (!entry || !d || d.version !== entry.version) return [];
      const { start, end } = params.range;
      // Fixes left unchecked by the diagnosis's budget are checked now, when they are asked for (the
      // agent keeps the checks already made, so this costs only the ones left).
      if (((entry.payload as { fixes_unchecked?: number }).fixes_unchecked ?? 0) > 0) {
        try {
          const again = await call(
            d.uri,
            "diagnose",
            contextOf(d),
            { timeout_ms: DIAGNOSE_TIMEOUT_MS, verify_budget_ms: QUICK_FIX_CHECK_MS },
            token,
          );
          if (again.ok && documents.get(d.uri)?.version === d.version)
            last.set(d.uri, (entry = { version: d.version, root: entry.root, payload: again.payload }));
        } catch {
          // Cancelled, or no agency: the fixes checked so far.
        }
      }
      const out: CodeAction[] = [];
      for (const x of entry.payload.diagnostics) {
        const r = { start: toLsp(x.range.start), end: toLsp(x.range.end) };
        const before = (a: { line: number; character: number }, b: typeof a) =>
          a.line < b.line || (a.line === b.line && a.character <= b.character);
        if (!before(r.start, end) || !before(start, r.end)) continue;
        for (const fix of x.fixes) {
          if (!fix.verified) continue;
          const changes: WorkspaceEdit["changes"] = {};
          for (const e of fix.edits) {
            const uri = pathToFileURL(join(entry.root, e.file_path.split("/").join(sep))).href;
            (changes[uri] ??= []).push({
              range: { start: toLsp(e.range.start), end: toLsp(e.range.end) },
              newText: e.new_text,
            });
          }
          out.push({
            title: fix.description,
            kind: CodeActionKind.QuickFix,
            diagnostics: [{ range: r, message: x.message, code: x.code, source: "aip diagnose" }],
            isPreferred: out.length === 0,
            edit: { changes },
          });
        }
      }
      return out;
    },
  };
}
