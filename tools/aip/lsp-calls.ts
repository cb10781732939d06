/**
 * The AIP calls of `aip lsp`: one call to the agency per editor request, tagged with its document
 * (`document_id`, so that the agency keeps the latest), cancelled by $/cancelRequest or by a newer
 * version of the document, sent again without a workspace root the agency refused (lsp-roots.ts),
 * answered by the local engines while the agency is unavailable (lsp-fallback.ts), and turned into
 * an LSP error when it fails.
 */
import type { TextDocument } from "vscode-languageserver-textdocument";
import { LSPErrorCodes, ResponseError, type CancellationToken, type TextDocuments } from "vscode-languageserver/node";
import type { Problem } from "../../protocol/contract/errors.js";
import { newTraceId } from "../../protocol/contract/trace.js";
import { AipCaller, type Agency, type Answer } from "./agency.js";
import type { LocalFallback } from "./lsp-fallback.js";
import type { BufferOnlyRoots } from "./lsp-roots.js";

type Json = Record<string, unknown>;

/** An AIP-1 problem as the LSP error: the code and detail in the message, the whole problem in `data`. */
export function problemError(problem: Problem): ResponseError<Problem> {
  return new ResponseError(LSPErrorCodes.RequestFailed, `${problem.type}: ${problem.detail}`, problem);
}

/** The payload of an answer, or its problem thrown as the LSP error. */
export function payloadOf<T>(answer: Answer<T>): T {
  if (!answer.ok) throw problemError(answer.problem);
  return answer.payload;
}

export class AgencyCalls {
  private readonly aip: AipCaller;
  private readonly clientId = `lsp-${newTraceId().slice(0, 12)}`;
  /** In-flight AIP calls per document: a newer version cancels them (latest wins, also in the agency by document_id). */
  private readonly inflight = new Map<string, Set<AbortController>>();

  constructor(
    private readonly agency: Agency,
    private readonly bufferOnly: BufferOnlyRoots,
    private readonly fallback: LocalFallback,
  ) {
    this.aip = new AipCaller(agency.socket);
  }

  /** A document's change cancels its calls in flight; its close forgets them. */
  follow(documents: TextDocuments<TextDocument>): void {
    documents.onDidChangeContent((e) => {
      for (const c of this.inflight.get(e.document.uri) ?? []) c.abort();
    });
    documents.onDidClose((e) => this.inflight.delete(e.document.uri));
  }

  /** The agency serves (an embedded one starts once initialize named the folders); its failure as the LSP error. */
  private ready(): Promise<void> {
    return this.agency.ready.catch((err: Error) => {
      throw new ResponseError(
        LSPErrorCodes.RequestFailed,
        `The embedded agency did not start: ${err.message}${this.agency.logFile ? ` (log: ${this.agency.logFile})` : ""}`,
      );
    });
  }

  /** One AIP call for a document's request; aborted by $/cancelRequest or a newer version of the document. */
  async call<T = Json>(
    uri: string | undefined,
    action: string,
    context: Json,
    constraints: Json,
    token: CancellationToken,
  ): Promise<Answer<T>> {
    const controller = new AbortController();
    if (token.isCancellationRequested) controller.abort();
    const sub = token.onCancellationRequested(() => controller.abort());
    const set = uri !== undefined ? (this.inflight.get(uri) ?? new Set()) : undefined;
    if (uri !== undefined && set) this.inflight.set(uri, set.add(controller));
    const send = (ctx: Json): Promise<Answer<T>> =>
      this.aip.invoke<T>(
        {
          action,
          context: ctx,
          constraints: {
            ...(uri !== undefined ? { document_id: uri, client_id: this.clientId } : {}),
            ...constraints,
          },
        },
        controller.signal,
      );
    try {
      await this.ready();
      const sent = this.bufferOnly.context(context);
      let answer: Answer<T>;
      try {
        answer = await send(sent);
      } catch (err) {
        if (controller.signal.aborted) throw err;
        this.fallback.note(true);
        if (this.fallback.covers(action, constraints))
          return await this.fallback.answer<T>(action, context, constraints);
        throw err;
      }
      const unavailable = !answer.ok && answer.problem.type === "AIP_ERR_UNAVAILABLE";
      this.fallback.note(unavailable);
      if (unavailable && this.fallback.covers(action, constraints))
        return await this.fallback.answer<T>(action, context, constraints);
      const retry = answer.ok ? undefined : this.bufferOnly.retry(sent, answer.problem);
      return retry ? await send(retry) : answer;
    } catch (err) {
      if (err instanceof ResponseError) throw err;
      if (controller.signal.aborted)
        throw new ResponseError(LSPErrorCodes.RequestCancelled, `Cancelled: ${action} on ${uri ?? "the workspace"}`);
      throw new ResponseError(
        LSPErrorCodes.RequestFailed,
        `The agency on ${this.agency.socket} did not answer: ${(err as Error).message}`,
      );
    } finally {
      sub.dispose();
      set?.delete(controller);
    }
  }

  close(): void {
    this.aip.close();
  }
}
