import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { passThrough } from "../../orchestrator/request/forward.js";
import { PASS_THROUGH_MIN_CHARS } from "../../orchestrator/pool/transport.js";
import { invokeHttp, ndjsonExchange } from "../../protocol/transport/client.js";
import { echo, startAgency, type Agency } from "./harness.js";

const merged = { route: 0.01, queue: 0, agent: 1.5, total: 1.6, "agent.handler": 1.25 };

/** What `finish` makes of `answer` and what JSON.stringify then writes, decoded: the value pass-through must equal. */
function finished(answer: Record<string, unknown>, name = "fx", version = "1.0.0"): unknown {
  return JSON.parse(
    JSON.stringify({ ...answer, timings_ms: merged, agent: answer.agent ?? name, version: answer.version ?? version }),
  );
}

function through(text: string): unknown {
  const answer = JSON.parse(text) as Record<string, unknown>;
  const own = answer.timings_ms as Record<string, number> | undefined;
  const out = passThrough(
    text,
    own,
    answer.agent === undefined ? "fx" : undefined,
    answer.version === undefined ? "1.0.0" : undefined,
    merged,
  );
  return out === undefined ? undefined : JSON.parse(out);
}

describe("passThrough: the agent's answer text with the orchestrator's members, not encoded again", () => {
  it("equals the finished answer, encoded, whatever the payload holds", () => {
    const answers = [
      {
        status: "success",
        payload: { a: [1, 'x"y', { b: null }] },
        trace_id: "t-1",
        agent: "a",
        version: "2",
        timings_ms: { handler: 1.25 },
      },
      // No timings of its own, no agent or version: those are added.
      { status: "success", payload: { s: "}" }, trace_id: "t-2" },
      // The payload's last member is a nested timings_ms, the answer has none of its own.
      { status: "success", trace_id: "t-3", payload: { x: 1, timings_ms: { handler: 1 } } },
      {
        status: "error",
        trace_id: "t-4",
        error: { type: "AIP_ERR_TIMEOUT", title: "T", status: 504, detail: "d", instance: "t-4" },
        timings_ms: { accept: 0 },
      },
    ];
    for (const a of answers) expect(through(JSON.stringify(a)), JSON.stringify(a)).toEqual(finished(a));
    // Text as an agent may write it: blanks, escapes kept as written (the value is the same).
    const spaced = '{ "status" : "success", "payload" : "\\u00e9", "trace_id":"t-5","timings_ms":{"h":2}}\n';
    expect(through(spaced)).toEqual(finished(JSON.parse(spaced) as Record<string, unknown>));
  });

  it("declines (undefined: encoded as before) when the agent's timings_ms is not its last member as JSON.stringify writes it", () => {
    const first = '{"timings_ms":{"h":1},"status":"success","payload":1,"trace_id":"t"}';
    const spaced = '{"status":"success","payload":1,"trace_id":"t","timings_ms":{"h": 1}}';
    for (const text of [first, spaced, '{"status":"success","trace_id":"t","timings_ms":{"h":1}} x'])
      expect(passThrough(text, { h: 1 }, undefined, undefined, merged)).toBeUndefined();
  });
});

describe("answers passed through the agency, over HTTP and NDJSON", () => {
  let agency: Agency;
  beforeAll(async () => {
    agency = await startAgency([{ name: "fx", capabilities: ["echo"] }]);
  });
  afterAll(() => agency.stop());

  it("a long answer reaches the client whole, with the agency's timings, agent and version", async () => {
    const pad = 4 * PASS_THROUGH_MIN_CHARS;
    const check = (json: Record<string, unknown>, traceId: string): void => {
      expect(json).toMatchObject({ status: "success", trace_id: traceId, agent: "fx", version: "1.0.0" });
      const payload = json.payload as { pad: string; nested: unknown; action: string };
      expect(payload.pad).toBe('é"x'.repeat(Math.ceil(pad / 3)).slice(0, pad));
      expect(payload.nested).toEqual({ timings_ms: { n: 1 } });
      expect(payload.action).toBe("echo");
      expect(Object.keys(json.timings_ms as object)).toEqual(
        expect.arrayContaining(["route", "queue", "agent", "total", "agent.accept", "agent.handler"]),
      );
    };
    const http = await invokeHttp(agency.socket, echo({ trace_id: "pt-http", constraints: { pad } }));
    expect(http.status).toBe(200);
    check(http.json, "pt-http");
    const lines = await ndjsonExchange(
      agency.socket,
      `${JSON.stringify(echo({ trace_id: "pt-nd", constraints: { pad } }))}\n`,
      {
        expect: 1,
      },
    );
    check(JSON.parse(lines[0]!) as Record<string, unknown>, "pt-nd");
  });
});
