import { describe, expect, it } from "vitest";
import { checkAnswer } from "../../../orchestrator/request/forward.js";
import { ResponseSchema } from "../../../protocol/contract/schemas.js";

const ok = { status: "success", payload: { any: ["thing", 1] }, trace_id: "t-1", agent: "dummy", version: "1.0.0" };
const problem = {
  type: "AIP_ERR_TIMEOUT",
  title: "Timeout",
  status: 504,
  detail: "slow",
  instance: "t-1",
};

describe("the agent's answer, checked structurally", () => {
  it("passes a well-formed answer through as the same object, payload untouched", () => {
    expect(checkAnswer(ok)).toBe(ok);
    const err = { status: "error", trace_id: "t-1", error: problem, timings_ms: { handler: 0.5 } };
    expect(checkAnswer(err)).toBe(err);
  });

  it("names what is wrong, where zod's envelope check would also refuse it", () => {
    const cases: [unknown, string][] = [
      [[1], "not a JSON object"],
      [{ ...ok, status: "done" }, "status"],
      [{ ...ok, trace_id: "has space" }, "trace_id"],
      [{ ...ok, trace_id: undefined }, "trace_id"],
      [{ ...ok, agent: 7 }, "agent"],
      [{ ...ok, version: null }, "version"],
      [{ ...ok, timings_ms: { a: -1 } }, "timings_ms.a"],
      [{ ...ok, timings_ms: "fast" }, "timings_ms"],
      [{ status: "error", trace_id: "t-1", error: { ...problem, type: "NOT_A_CODE" } }, "error.type"],
      [{ status: "error", trace_id: "t-1" }, "error"],
      [{ ...ok, warnings: [{ type: "AIP_ERR_TIMEOUT" }] }, "warnings"],
    ];
    for (const [answer, where] of cases) {
      const out = checkAnswer(answer);
      expect(typeof out, JSON.stringify(answer)).toBe("string");
      expect(out).toContain(where);
      expect(ResponseSchema.safeParse(answer).success).toBe(false);
    }
  });
});
