/** What happens after every forwarded request: its metrics, the canary's observation, one log line. */
import { RateLimit, type Logger } from "../protocol/log.js";
import type { RequestOutcome } from "./forward.js";
import type { Metrics } from "./metrics.js";

/** Request lines for client errors (4xx but cancellations) logged per second at most; the others are counted in `suppressed`. */
const CLIENT_ERROR_LOG_PER_S = 50;

export class RequestOutcomes {
  private readonly clientErrorLog = new RateLimit(CLIENT_ERROR_LOG_PER_S);

  constructor(
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly observe: (agent: string, version: string, ms: number, serverError: boolean) => void,
  ) {}

  /** Per request: the metrics, the canary's observation, and one log line (client errors rate-limited). */
  record(o: RequestOutcome): void {
    this.metrics.request(o);
    if (o.agent && o.version) this.observe(o.agent, o.version, o.timings_ms.total ?? 0, o.server_error);
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
