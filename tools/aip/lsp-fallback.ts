/**
 * The editor fallback of `aip lsp`: after FALLBACK_AFTER consecutive unavailable answers (the agency
 * answers AIP_ERR_UNAVAILABLE, or does not answer at all), completion and document symbols come from
 * the model-free engines run in this process (complete-lite's syntactic engine, summarize's outline)
 * on the open buffer alone; the user is told once, and again when the agency answers and the editor
 * is switched back. Every request still goes to the agency first: its answer is what switches back.
 */
import { ParseCache } from "../../agents/lib/code/cache.js";
import { createCompleteLite } from "../../agents/lib/completion/handler.js";
import { standaloneContext } from "../../agents/lib/runtime/context.js";
import type { Handler } from "../../agents/lib/runtime/types.js";
import { createSummarize } from "../../agents/summarize/handler.js";
import { AipError } from "../../protocol/contract/errors.js";
import { createLogger } from "../../protocol/util/log.js";
import { newTraceId } from "../../protocol/contract/trace.js";
import type { Answer } from "./agency.js";

/** Consecutive unavailable answers after which the editor is served locally. */
export const FALLBACK_AFTER = 3;
/** A local answer's budget: the syntactic engines answer in milliseconds on any buffer the agency would take. */
const LOCAL_BUDGET_MS = 2000;

type Json = Record<string, unknown>;

export class LocalFallback {
  private misses = 0;
  private active = false;
  private engines: Record<string, Handler> | undefined;

  /** `tell`: window/showMessage to the user. */
  constructor(private readonly tell: (message: string, level: "warning" | "info") => void) {}

  get serving(): boolean {
    return this.active;
  }

  /** After each call to the agency: whether it was unavailable (a problem AIP_ERR_UNAVAILABLE, or no answer). */
  note(unavailable: boolean): void {
    if (!unavailable) {
      this.misses = 0;
      if (this.active) {
        this.active = false;
        this.tell("aip lsp: the agency answers again; completion and symbols come from it again.", "info");
      }
      return;
    }
    this.misses++;
    if (!this.active && this.misses >= FALLBACK_AFTER) {
      this.active = true;
      this.tell(
        `aip lsp: the agency was unavailable ${this.misses} times in a row; completion and document symbols ` +
          "now come from the local model-free engines (open buffers only) until it answers again.",
        "warning",
      );
    }
  }

  /** True when the fallback is on and has a local engine for this request. */
  covers(action: string, constraints: Json): boolean {
    if (!this.active) return false;
    return action === "summarize" || (action === "complete" && constraints.agent === "complete-lite");
  }

  /** The local engine's answer, from the buffer alone (no workspace: nothing is read from disk). */
  async answer<T>(action: string, context: Json, constraints: Json): Promise<Answer<T>> {
    this.engines ??= {
      complete: createCompleteLite(new ParseCache()),
      summarize: createSummarize(new ParseCache()),
    };
    const { workspace_root: _root, ...buffer } = context;
    const { agent: _agent, document_id: _doc, client_id: _client, timeout_ms: _t, ...rest } = constraints;
    const ctx = standaloneContext({
      traceId: newTraceId(),
      budgetMs: LOCAL_BUDGET_MS,
      log: createLogger({ agentName: "aip-lsp-fallback", destination: false }),
    });
    try {
      const payload = await this.engines[action]!({ action, context: buffer, constraints: rest } as never, ctx);
      return { ok: true, payload: payload as T };
    } catch (err) {
      if (err instanceof AipError) return { ok: false, problem: err.toProblem() };
      throw err;
    }
  }
}
