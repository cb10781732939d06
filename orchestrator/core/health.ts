/** Health probes: GET /healthz on each agent's socket, on a fresh connection, with a deadline. */
import { httpRequest, RequestTimeoutError } from "../../protocol/transport/client.js";

export interface ProbeResult {
  ok: boolean;
  report: Record<string, unknown> | null;
  error: string | null;
  /** No answer within the timeout: the process may be slow (busy, just started, starved) rather than wrong. */
  timedOut?: boolean;
}

/** One probe of an agent's /healthz; never throws. */
export async function probe(socketPath: string, timeoutMs: number): Promise<ProbeResult> {
  try {
    // A fresh connection each time: one kept alive would answer even after the socket file is gone.
    const res = await httpRequest(socketPath, { method: "GET", path: "/healthz", timeoutMs, agent: false });
    const report = JSON.parse(res.body) as Record<string, unknown>;
    if (res.status !== 200) return { ok: false, report, error: `healthz answered HTTP ${res.status}` };
    return { ok: true, report, error: null };
  } catch (err) {
    return {
      ok: false,
      report: null,
      error: `healthz failed: ${(err as Error).message}`,
      timedOut: err instanceof RequestTimeoutError,
    };
  }
}
