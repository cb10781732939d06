/**
 * Latest wins: a request carrying `constraints.document_id` (and optionally `constraints.client_id`)
 * supersedes queued and running requests for the same (client_id, document_id); they end with
 * AIP_ERR_CANCELLED, and because their signal reaches the llama context no compute is spent on stale text.
 */
import { AipError } from "../../../protocol/errors.js";
import type { AipRequest } from "../../../protocol/schemas.js";

export interface LatestTicket {
  /** Aborts when a newer request for the same document arrives. */
  signal: AbortSignal;
  key?: string;
  release(): void;
}

/** The (client_id, document_id) key of a request; undefined when it carries no document_id. */
export function documentKey(request: AipRequest): string | undefined {
  const doc = request.constraints.document_id;
  if (typeof doc !== "string" || doc === "") return undefined;
  const client = request.constraints.client_id;
  return `${typeof client === "string" ? client : ""}\u0000${doc}`;
}

export class LatestWins {
  private readonly running = new Map<string, AbortController>();
  superseded = 0;

  /** Register a request; an older one with the same key is aborted. */
  enter(request: AipRequest, traceId: string): LatestTicket {
    const key = documentKey(request);
    const controller = new AbortController();
    if (key === undefined) return { signal: controller.signal, release: () => undefined };
    const previous = this.running.get(key);
    if (previous) {
      this.superseded++;
      previous.abort(
        new AipError(
          "AIP_ERR_CANCELLED",
          `Superseded by a newer request (trace ${traceId}) for document ${JSON.stringify(request.constraints.document_id)}`,
          {
            extensions: { superseded_by: traceId, document_id: request.constraints.document_id },
          },
        ),
      );
    }
    this.running.set(key, controller);
    return {
      signal: controller.signal,
      key,
      release: () => {
        if (this.running.get(key) === controller) this.running.delete(key);
      },
    };
  }
}
