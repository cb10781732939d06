/**
 * Latest wins: IDEs fire a completion per keystroke. A request carrying `constraints.document_id`
 * (and optionally `constraints.client_id`) supersedes the queued or running request with the same
 * pair from the same client connection: that one is aborted with AIP_ERR_CANCELLED, which also closes
 * its call into the agent. The client_id is scoped to the connection before anything reads it, so two
 * clients never cancel each other, whatever ids they send (README "Latest wins").
 */
import { AipError } from "../protocol/errors.js";
import type { AipRequest } from "../protocol/schemas.js";

interface Entry {
  traceId: string;
  controller: AbortController;
}

/**
 * Scope a raw request's `constraints.client_id` to the client connection it came on: `c<N>~<client_id>`.
 * Done before validation and forwarding, so the orchestrator's key and the agent's own latest-wins
 * (which sees only the orchestrator's pooled connections) are both per connection.
 */
export function scopeToConnection(value: unknown, connection: number): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const constraints = (value as Record<string, unknown>).constraints;
  if (typeof constraints !== "object" || constraints === null || Array.isArray(constraints)) return value;
  const c = constraints as Record<string, unknown>;
  if (typeof c.document_id !== "string" || c.document_id === "") return value;
  const client = typeof c.client_id === "string" ? c.client_id : "";
  return { ...(value as Record<string, unknown>), constraints: { ...c, client_id: `c${connection}~${client}` } };
}

/** The supersession key of a request, or undefined when it carries no document id. */
export function documentKey(request: AipRequest): string | undefined {
  const doc = request.constraints["document_id"];
  if (typeof doc !== "string" || doc === "") return undefined;
  const client = request.constraints["client_id"];
  return `${typeof client === "string" ? client : ""}\u0000${request.action}\u0000${doc}`;
}

export class Supersession {
  private readonly latest = new Map<string, Entry>();

  /** Make this request the latest for its key, cancelling the previous one; returns the cleanup. */
  claim(request: AipRequest, traceId: string, controller: AbortController): () => void {
    const key = documentKey(request);
    if (key === undefined) return () => undefined;
    const previous = this.latest.get(key);
    if (previous) {
      previous.controller.abort(
        new AipError(
          "AIP_ERR_CANCELLED",
          `Superseded by request ${traceId} for document ${String(request.constraints["document_id"])}`,
          {
            extensions: { superseded_by: traceId },
          },
        ),
      );
    }
    const entry = { traceId, controller };
    this.latest.set(key, entry);
    return () => {
      if (this.latest.get(key) === entry) this.latest.delete(key);
    };
  }

  get size(): number {
    return this.latest.size;
  }
}
