/** What happens after every forwarded request: its metrics, the canary's observation, one log line. */
import { RateLimit, handLine, type HandLine, type Logger } from "../../protocol/util/log.js";
import type { RequestOutcome } from "./forward.js";
import type { Metrics } from "./metrics.js";

/** Request lines for client errors (4xx but cancellations) logged per second at most; the others are counted in `suppressed`. */
const CLIENT_ERROR_LOG_PER_S = 50;

export class RequestOutcomes {
  private readonly clientErrorLog = new RateLimit(CLIENT_ERROR_LOG_PER_S);
  private readonly successLine: HandLine;

  constructor(
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly observe: (agent: string, version: string, ms: number, serverError: boolean) => void,
  ) {
    this.successLine = handLine(log, "info");
  }

  /** Per request: the metrics, the canary's observation, and one log line (client errors rate-limited). */
  record(o: RequestOutcome): void {
    this.metrics.request(o);
    if (o.agent && o.version) this.observe(o.agent, o.version, o.timings_ms.total ?? 0, o.server_error);
    // The common line, a success, is written by hand: the same line pino writes below (test/orchestrator/request/outcomes.test.ts).
    if (o.outcome === "success" && !o.server_error && this.successLine(successMembers(o))) return;
    const fields = {
      event: "request",
      trace_id: o.trace_id,
      action: o.action,
      agent: o.agent,
      version: o.version,
      outcome: o.outcome,
      timings_ms: o.timings_ms,
    };
    if (o.server_error) this.log.warn(fields, `request failed: ${o.outcome}`);
    else if (o.outcome === "success" || o.outcome === "AIP_ERR_CANCELLED") this.log.info(fields, "request");
    else {
      const suppressed = this.clientErrorLog.take();
      if (suppressed !== undefined) this.log.info(suppressed > 0 ? { ...fields, suppressed } : fields, "request");
    }
  }
}

/** A JSON string's text; the common case (no quote, backslash or control character) without JSON.stringify. */
function str(v: string): string {
  return SAFE.test(v) ? `"${v}"` : JSON.stringify(v);
}
const SAFE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A successful request's members, as pino writes `{event, trace_id, action, agent, version, outcome, timings_ms}` then msg. */
function successMembers(o: RequestOutcome): string {
  let timings = "";
  const t = o.timings_ms;
  for (const k in t) timings += `${timings === "" ? "" : ","}${str(k)}:${JSON.stringify(t[k])}`;
  return (
    `"event":"request","trace_id":${str(o.trace_id)},"action":${str(o.action)},` +
    `"agent":${o.agent === null ? "null" : str(o.agent)},"version":${o.version === null ? "null" : str(o.version)},` +
    `"outcome":"success","timings_ms":{${timings}},"msg":"request"`
  );
}
