/** Health probes: GET /healthz on each agent's socket, on a fresh connection, with a deadline. */
import { httpRequest, RequestTimeoutError } from "../../protocol/transport/client.js";
import { workspaceId } from "../../protocol/util/paths.js";

export interface ProbeResult {
  ok: boolean;
  report: Record<string, unknown> | null;
  error: string | null;
  /** No answer within the timeout: the process may be slow (busy, just started, starved) rather than wrong. */
  timedOut?: boolean;
}

/** The most of an agent's own /healthz report the orchestrator keeps and shows (serialized, in characters). */
export const MAX_REPORT_CHARS = 16_384;
/** Report keys that may hold a client's path: shown as a digest (workspaceId), never as the path. */
const PATH_KEYS = /(^|_)(root|roots|path|paths|file|files|uri|cwd|dir|workspace|workspaces)$/;

/**
 * An agent's report as /healthz shows it: a string under a path key that looks like a path becomes its
 * digest (a client's workspace is nobody else's business), and a report over MAX_REPORT_CHARS keeps
 * only what routing and `aip health` read (status, reason, model_engine).
 */
export function boundedReport(report: Record<string, unknown>): Record<string, unknown> {
  const digest = (value: unknown, pathKey: boolean, depth: number): unknown => {
    if (typeof value === "string") return pathKey && /[/\\]/.test(value) ? workspaceId(value) : value;
    if (depth > 8 || value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) return value.map((v) => digest(v, pathKey, depth + 1));
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, digest(v, PATH_KEYS.test(k), depth + 1)]),
    );
  };
  const safe = digest(report, false, 0) as Record<string, unknown>;
  const size = JSON.stringify(safe).length;
  if (size <= MAX_REPORT_CHARS) return safe;
  const kept: Record<string, unknown> = { report_truncated_chars: size };
  for (const key of ["status", "reason", "model_engine"])
    if (key in safe && JSON.stringify(safe[key]).length <= MAX_REPORT_CHARS / 2) kept[key] = safe[key];
  return kept;
}

/** One probe of an agent's /healthz; never throws. */
export async function probe(socketPath: string, timeoutMs: number): Promise<ProbeResult> {
  try {
    // A fresh connection each time: one kept alive would answer even after the socket file is gone.
    const res = await httpRequest(socketPath, { method: "GET", path: "/healthz", timeoutMs, agent: false });
    const parsed = JSON.parse(res.body) as unknown;
    const report =
      parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
        ? boundedReport(parsed as Record<string, unknown>)
        : { report_not_an_object: true };
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
