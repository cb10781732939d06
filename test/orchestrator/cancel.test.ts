import { describe, expect, it } from "vitest";
import { Cancellation } from "../../orchestrator/cancel.js";

describe("Cancellation", () => {
  it("tells the current waiter once, with the first reason; later aborts change nothing", () => {
    const c = new Cancellation();
    const seen: string[] = [];
    c.onAbort((r) => seen.push(`queue: ${r.message}`));
    // The queue wait ended; the agent call waits now.
    c.onAbort((r) => seen.push(`call: ${r.message}`));
    expect(c.aborted).toBe(false);
    expect(c.reason).toBeUndefined();
    c.abort(new Error("deadline"));
    c.abort(new Error("client left"));
    expect(seen).toEqual(["call: deadline"]);
    expect(c.aborted).toBe(true);
    expect(c.reason?.message).toBe("deadline");
  });

  it("a waiter that stopped waiting is not told", () => {
    const c = new Cancellation();
    const seen: string[] = [];
    c.onAbort((r) => seen.push(r.message));
    c.clear();
    c.abort(new Error("superseded"));
    expect(seen).toEqual([]);
    expect(c.reason?.message).toBe("superseded");
  });
});
