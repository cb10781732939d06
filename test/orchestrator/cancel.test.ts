import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { Cancellation, follow, unfollow } from "../../protocol/transport/cancel.js";

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

describe("follow: the requests of one client connection", () => {
  it("every cancellation still following is aborted when the signal aborts, through one listener", () => {
    const controller = new AbortController();
    const [a, b, c] = [new Cancellation(), new Cancellation(), new Cancellation()];
    for (const x of [a, b, c]) follow(controller.signal, x, () => new Error("client left"));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    unfollow(controller.signal, b);
    controller.abort();
    expect([a, b, c].map((x) => x.reason?.message)).toEqual(["client left", undefined, "client left"]);
  });

  it("a cancellation following a signal already aborted is aborted at once", () => {
    const d = new Cancellation();
    follow(AbortSignal.abort(), d, () => new Error("gone before"));
    expect(d.reason?.message).toBe("gone before");
  });
});
