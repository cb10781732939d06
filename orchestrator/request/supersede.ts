/**
 * Latest wins in the orchestrator (protocol/transport/latest.ts has the rule and its key): the client_id is scoped
 * to the client connection before anything reads it, so two clients never cancel each other, whatever
 * ids they send (docs/operations.md, "Latest wins").
 */

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
