import { describe, expect, it } from "vitest";
import type { DestinationStream } from "pino";
import { createLogger } from "../../../protocol/util/log.js";
import { Metrics } from "../../../orchestrator/request/metrics.js";
import { RequestOutcomes } from "../../../orchestrator/request/outcomes.js";
import type { RequestOutcome } from "../../../orchestrator/request/forward.js";

/** A destination that keeps its lines. */
function capture(): DestinationStream & { lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (line: string) => void lines.push(line) };
}

const sameStamp = (line: string): string => line.replace(/"timestamp":"[^"]*"/, '"timestamp":"T"');

describe("the request log line", () => {
  const outcome = (o: Partial<RequestOutcome>): RequestOutcome => ({
    trace_id: "t-1",
    action: "echo",
    agent: "dummy",
    version: "1.0.0",
    outcome: "success",
    server_error: false,
    timings_ms: { route: 0.012, queue: 0, agent: 0.25, "agent.handler": 1.5, total: 0.3 },
    ...o,
  });

  it("of a success is written by hand, byte for byte the line pino writes for the same fields", () => {
    for (const o of [
      outcome({}),
      outcome({ action: 'odd "action"\\\n\u2028é', trace_id: "a.b:c_d-e" }),
      outcome({ agent: null, version: null, timings_ms: { route: 1e-3, total: 12345.678 } }),
    ]) {
      const hand = capture();
      const viaPino = capture();
      const observed: unknown[] = [];
      new RequestOutcomes(
        new Metrics({ agents: () => [] }),
        createLogger({ agentName: "orchestrator", destination: hand }),
        (...args) => observed.push(args),
      ).record(o);
      createLogger({ agentName: "orchestrator", destination: viaPino }).info(
        {
          event: "request",
          trace_id: o.trace_id,
          action: o.action,
          agent: o.agent,
          version: o.version,
          outcome: o.outcome,
          timings_ms: o.timings_ms,
        },
        "request",
      );
      expect(hand.lines).toHaveLength(1);
      expect(sameStamp(hand.lines[0]!)).toBe(sameStamp(viaPino.lines[0]!));
      expect(JSON.parse(hand.lines[0]!)).toMatchObject({ level: "info", event: "request", action: o.action });
      // The canary still observes every request with an agent.
      expect(observed).toHaveLength(o.agent ? 1 : 0);
    }
  });

  it("is not written when the level is off, nor when the logger is silent", () => {
    const dest = capture();
    const log = createLogger({ agentName: "orchestrator", destination: dest, level: "warn" });
    new RequestOutcomes(new Metrics({ agents: () => [] }), log, () => undefined).record(outcome({}));
    expect(dest.lines).toEqual([]);
    const silent = createLogger({ agentName: "orchestrator", destination: false });
    expect(() =>
      new RequestOutcomes(new Metrics({ agents: () => [] }), silent, () => undefined).record(outcome({})),
    ).not.toThrow();
  });
});
