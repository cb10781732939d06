/**
 * Latest wins (docs/operations.md, "Latest wins"): editors fire a request per keystroke. A request carrying
 * `constraints.document_id` (and optionally `constraints.client_id`) supersedes the queued or running
 * request with the same key; that one is aborted with AIP_ERR_CANCELLED, which also reaches whatever
 * it was waiting on (the agent call, the model's context).
 *
 * The key is (client_id, action, document_id). The action belongs in it: a `summarize` of a file must
 * not cancel the completion being typed in it, nor the other way round; only a newer request of the same
 * kind makes an older one stale. The orchestrator applies this across its clients (after scoping
 * `client_id` to the connection), and an agent applies it again among the requests it receives.
 */
import { AipError } from "../contract/errors.js";
import type { AipRequest } from "../contract/schemas.js";

/** The supersession key of a request, or undefined when it carries no document id. */
export function documentKey(request: AipRequest): string | undefined {
  const doc = request.constraints["document_id"];
  if (typeof doc !== "string" || doc === "") return undefined;
  const client = request.constraints["client_id"];
  return `${typeof client === "string" ? client : ""}\u0000${request.action}\u0000${doc}`;
}

export interface LatestTicket {
  /** Aborted when a newer request with the same key arrives. */
  signal: AbortSignal;
  key?: string;
  /** The request is done: forget it (a newer one that already replaced it is kept). */
  release(): void;
}

/** What a newer request aborts: an AbortController, or any cancellation with the same `abort`. */
export interface Abortable {
  abort(reason: Error): void;
}

const NOTHING_TO_RELEASE = (): void => undefined;

export class LatestWins {
  private readonly running = new Map<string, Abortable>();
  /** Requests aborted because a newer one came. */
  superseded = 0;

  /** Make this request the latest for its key, aborting the previous one; `controller` is the one aborted later. */
  claim(request: AipRequest, traceId: string, controller = new AbortController()): LatestTicket {
    const key = documentKey(request);
    const release = this.supersede(request, traceId, controller, key);
    return key === undefined ? { signal: controller.signal, release } : { signal: controller.signal, key, release };
  }

  /**
   * `claim` for a caller with its own cancellation: make this request the latest for its key, aborting
   * the previous one; `target` is the one aborted later. Returns the release.
   */
  supersede(request: AipRequest, traceId: string, target: Abortable, key = documentKey(request)): () => void {
    if (key === undefined) return NOTHING_TO_RELEASE;
    const previous = this.running.get(key);
    if (previous) {
      this.superseded++;
      const doc = request.constraints["document_id"];
      previous.abort(
        new AipError("AIP_ERR_CANCELLED", `Superseded by request ${traceId} for document ${JSON.stringify(doc)}`, {
          extensions: { superseded_by: traceId, document_id: doc },
        }),
      );
    }
    this.running.set(key, target);
    return () => {
      if (this.running.get(key) === target) this.running.delete(key);
    };
  }

  /** Documents with a request in flight. */
  get size(): number {
    return this.running.size;
  }
}
