/**
 * Completion in `aip lsp`: textDocument/completion asks complete-lite (the checker's members, or the
 * syntactic engine while the checker loads, with work-done progress meanwhile: lsp-progress.ts), and
 * textDocument/inlineCompletion asks the model agent `complete`, tuned by initializationOptions.
 */
import {
  CancellationToken,
  CompletionItemKind,
  InsertTextFormat,
  type CompletionItem,
  type Connection,
  type InlineCompletionItem,
  type Position,
  type Range,
} from "vscode-languageserver/node";
import type { z } from "zod";
import { INFERENCE_TIMEOUT_MAX_MS, type CompletePayloadSchema } from "../../protocol/contract/actions.js";
import { payloadOf, type AgencyCalls } from "./lsp-calls.js";
import { toAip, toLsp, type EditorWorkspace } from "./lsp-documents.js";
import { CheckerProgress } from "./lsp-progress.js";

type CompletePayload = z.output<typeof CompletePayloadSchema>;

const ITEM_KINDS: Record<string, CompletionItemKind> = {
  method: CompletionItemKind.Method,
  function: CompletionItemKind.Function,
  constructor: CompletionItemKind.Constructor,
  property: CompletionItemKind.Property,
  variable: CompletionItemKind.Variable,
  class: CompletionItemKind.Class,
  interface: CompletionItemKind.Interface,
  module: CompletionItemKind.Module,
  enum: CompletionItemKind.Enum,
  enumMember: CompletionItemKind.EnumMember,
  keyword: CompletionItemKind.Keyword,
  snippet: CompletionItemKind.Snippet,
  typeParameter: CompletionItemKind.TypeParameter,
  field: CompletionItemKind.Field,
  constant: CompletionItemKind.Constant,
  text: CompletionItemKind.Text,
};

/**
 * Deadline of a completion request. complete-lite's manifest default suits keystrokes on a warm
 * buffer; a file's first request parses it cold, and a stale request is cancelled by the editor anyway.
 */
const COMPLETION_TIMEOUT_MS = 2000;

/** While complete-lite's checker loads a workspace: how often aip lsp asks again (for its progress), and for how long. */
const CHECKER_RECHECK_MS = 1000;
const CHECKER_RECHECK_LIMIT_MS = 10 * 60_000;

/** Deadline of an inline completion beyond its inference limit: the prompt before it and the syntax check after. */
const INLINE_DEADLINE_SLACK_MS = 1000;
/** Problems that mean "no inline suggestion now" rather than a failure worth an error in the editor. */
const INLINE_NOTHING = ["AIP_ERR_UNAVAILABLE", "AIP_ERR_NO_ROUTE", "AIP_ERR_SYNTAX", "AIP_ERR_MODEL_TIMEOUT"];

export class CompletionFeature {
  /** initializationOptions.inline_best_effort: offer the model's best candidate even when it failed the syntax check. */
  private inlineBestEffort = false;
  /**
   * initializationOptions.inline_timeout_ms: the model's inference limit for inline completion
   * (constraints.inference_timeout_ms; above the agent's default), for models slower than that.
   */
  private inlineTimeoutMs: number | undefined;
  private readonly checker: CheckerProgress;
  private readonly completeLite = { agent: "complete-lite", timeout_ms: COMPLETION_TIMEOUT_MS };

  constructor(
    private readonly connection: Connection,
    private readonly workspace: EditorWorkspace,
    private readonly calls: AgencyCalls,
  ) {
    this.checker = new CheckerProgress({
      create: () => connection.window.createWorkDoneProgress(),
      everyMs: CHECKER_RECHECK_MS,
      limitMs: CHECKER_RECHECK_LIMIT_MS,
    });
  }

  /** The inline options of initialize's initializationOptions (a bad inline_timeout_ms is logged and ignored). */
  configure(initializationOptions: unknown): void {
    const options = (initializationOptions ?? {}) as { inline_best_effort?: unknown; inline_timeout_ms?: unknown };
    this.inlineBestEffort = options.inline_best_effort === true;
    const t = options.inline_timeout_ms;
    this.inlineTimeoutMs = undefined;
    if (Number.isInteger(t) && (t as number) >= 1 && (t as number) <= INFERENCE_TIMEOUT_MAX_MS)
      this.inlineTimeoutMs = t as number;
    else if (t !== undefined)
      this.connection.console.warn(
        `aip lsp: initializationOptions.inline_timeout_ms must be an integer from 1 to ${INFERENCE_TIMEOUT_MAX_MS}, got ${JSON.stringify(t)}: using the agent's default`,
      );
  }

  listen(): void {
    this.connection.onCompletion((params, token) => this.complete(params.textDocument.uri, params.position, token));
    this.connection.languages.inlineCompletion.on((params, token) =>
      this.inline(params.textDocument.uri, params.position, token),
    );
  }

  dispose(): void {
    this.checker.dispose();
  }

  /** textDocument/completion: complete-lite's items at the cursor. */
  private async complete(
    uri: string,
    position: Position,
    token: CancellationToken,
  ): Promise<{ isIncomplete: boolean; items: CompletionItem[] }> {
    const { workspace, calls, completeLite } = this;
    const d = workspace.doc(uri);
    const answer = await calls.call<CompletePayload>(
      d.uri,
      "complete",
      { ...workspace.contextOf(d), cursor: toAip(position) },
      completeLite,
      token,
    );
    const p = payloadOf(answer);
    // Asked again without document_id (it must not cancel the user's requests), at the buffer's end.
    const recheck = async (): Promise<CompletePayload | undefined> => {
      const now = workspace.documents.get(d.uri);
      if (!now) return undefined;
      const again = await calls.call<CompletePayload>(
        undefined,
        "complete",
        workspace.contextOf(now),
        completeLite,
        CancellationToken.None,
      );
      return again.ok ? again.payload : undefined;
    };
    this.checker.note(workspace.contextOf(d).workspace_root as string | undefined, p, recheck);
    const range: Range = { start: toLsp(p.replace.start), end: toLsp(p.replace.end) };
    return {
      // A syntactic answer (the checker was not ready in time): ask again at the next keystroke.
      isIncomplete: p.engine === "syntactic",
      items: p.items.map((item, i): CompletionItem => ({
        label: item.label,
        kind: ITEM_KINDS[item.kind] ?? CompletionItemKind.Text,
        detail: item.detail,
        sortText: String(i).padStart(4, "0"),
        filterText: item.label,
        textEdit: { range, newText: item.insert_text },
        insertTextFormat:
          item.kind === "snippet" || /\$\d|\$\{/.test(item.insert_text)
            ? InsertTextFormat.Snippet
            : InsertTextFormat.PlainText,
      })),
    };
  }

  /** textDocument/inlineCompletion: the model's continuation at the cursor, or nothing. */
  private async inline(
    uri: string,
    position: Position,
    token: CancellationToken,
  ): Promise<{ items: InlineCompletionItem[] }> {
    const d = this.workspace.doc(uri);
    const answer = await this.calls.call<CompletePayload>(
      d.uri,
      "complete",
      { ...this.workspace.contextOf(d), cursor: toAip(position) },
      {
        agent: "complete",
        ...(this.inlineBestEffort ? { best_effort: true } : {}),
        ...(this.inlineTimeoutMs !== undefined
          ? {
              inference_timeout_ms: this.inlineTimeoutMs,
              timeout_ms: this.inlineTimeoutMs + INLINE_DEADLINE_SLACK_MS,
            }
          : {}),
      },
      token,
    );
    // Without a model, without a candidate that passes the syntax check, or with a model that did not answer in
    // time, there is nothing to suggest inline: an empty list, not an error (the editor asks again as the user types).
    if (!answer.ok && INLINE_NOTHING.includes(answer.problem.type)) {
      this.connection.console.log(`aip lsp: no inline completion: ${answer.problem.type}: ${answer.problem.detail}`);
      return { items: [] };
    }
    const p = payloadOf(answer);
    return {
      items: p.items.map((item): InlineCompletionItem => ({
        insertText: item.insert_text,
        range: { start: toLsp(p.replace.start), end: toLsp(p.replace.end) },
      })),
    };
  }
}
