import { describe, expect, it } from "vitest";
import { Cancellation } from "../../../protocol/transport/cancel.js";
import { AipError } from "../../../protocol/contract/errors.js";
import { AgentPool } from "../../../orchestrator/pool/agent-pool.js";
import { Slots } from "../../../orchestrator/pool/slots.js";
import { adaptiveSizing, fixedSizing } from "../../../orchestrator/pool/sizing.js";
import { LatencyWindow } from "../../../orchestrator/pool/stats.js";

const far = () => Date.now() + 60_000;

describe("adaptive sizing (docs/operations.md rule: follows demand)", () => {
  it("starts at min(5, max_concurrent)", () => {
    expect(adaptiveSizing.initial(8)).toBe(5);
    expect(adaptiveSizing.initial(2)).toBe(2);
  });
  it("grows at once to the demand when callers wait, up to max_concurrent", () => {
    expect(adaptiveSizing.next(5, { now: 6, peak: 6 }, 8)).toBe(6);
    expect(adaptiveSizing.next(5, { now: 200, peak: 200 }, 256)).toBe(200);
    expect(adaptiveSizing.next(5, { now: 300, peak: 300 }, 256)).toBe(256);
    expect(adaptiveSizing.next(8, { now: 500, peak: 500 }, 8)).toBe(8);
    expect(adaptiveSizing.next(5, { now: 5, peak: 5 }, 8)).toBe(5);
  });
  it("shrinks by 1 while the peak demand leaves a slot idle, never below 3 (or max_concurrent)", () => {
    expect(adaptiveSizing.next(5, { now: 1, peak: 4 }, 8)).toBe(4);
    expect(adaptiveSizing.next(5, { now: 1, peak: 5 }, 8)).toBe(5);
    expect(adaptiveSizing.next(4, { now: 0, peak: 1 }, 8)).toBe(3);
    expect(adaptiveSizing.next(3, { now: 0, peak: 0 }, 8)).toBe(3);
    expect(adaptiveSizing.next(2, { now: 0, peak: 0 }, 2)).toBe(2);
  });
  it("does not depend on history: the same steady demand gives the same size from a small or a grown pool", () => {
    let small = 3;
    let grown = 256;
    for (let i = 0; i < 500; i++) {
      small = adaptiveSizing.next(small, { now: 200, peak: 200 }, 256);
      grown = adaptiveSizing.next(grown, { now: 200, peak: 200 }, 256);
    }
    expect(small).toBe(200);
    expect(grown).toBe(200);
    expect(fixedSizing(10).next(10, { now: 500, peak: 500 }, 64)).toBe(10);
  });
});

describe("adaptive pool under steady load", () => {
  it("200 steady callers of a fast agent: the pool is sized to them (the latency rule shrank it to 3)", async () => {
    const pool = new AgentPool({
      label: "t",
      socketPath: "/nonexistent",
      maxConcurrent: 256,
      maxQueue: 256,
      transport: () => ({ send: async () => "", close: async () => undefined }),
    });
    const midway: number[] = [];
    await Promise.all(
      Array.from({ length: 200 }, async () => {
        for (let i = 0; i < 20; i++) {
          const release = await pool.acquire(far());
          await new Promise((r) => setImmediate(r));
          pool.record(1); // a 1 ms call
          if (i === 10) midway.push(pool.size);
          release();
        }
      }),
    );
    expect(Math.min(...midway)).toBeGreaterThanOrEqual(190);
  });
});

describe("latency window", () => {
  it("keeps the most recent calls and reports the nearest-rank P95", () => {
    const w = new LatencyWindow(20);
    for (let i = 1; i <= 20; i++) w.record(i);
    expect(w.p95()).toBe(19);
    for (let i = 0; i < 20; i++) w.record(100);
    expect(w.p95()).toBe(100);
    expect(w.count).toBe(20);
  });
});

describe("slots", () => {
  it("queues beyond the size, in order, and admits on release", async () => {
    const s = new Slots(2, 10, "t");
    const r1 = await s.acquire(far());
    const r2 = await s.acquire(far());
    const order: number[] = [];
    const w3 = s.acquire(far()).then((r) => (order.push(3), r));
    const w4 = s.acquire(far()).then((r) => (order.push(4), r));
    expect(s.stats()).toMatchObject({ inflight: 2, queued: 2 });
    r1();
    r1(); // releasing twice is harmless
    (await w3)();
    r2();
    (await w4)();
    expect(order).toEqual([3, 4]);
    expect(s.stats()).toMatchObject({ inflight: 0, queued: 0 });
  });

  it("rejects with AIP_ERR_SOCKET_BUSY when the queue is full", async () => {
    const s = new Slots(1, 1, "agent@1");
    await s.acquire(far());
    const queued = s.acquire(far());
    const err = await s.acquire(far()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AipError);
    expect((err as AipError).code).toBe("AIP_ERR_SOCKET_BUSY");
    expect((err as AipError).message).toContain("wait queue is full (1)");
    s.failQueued(new AipError("AIP_ERR_UNAVAILABLE", "gone"));
    await expect(queued).rejects.toMatchObject({ code: "AIP_ERR_UNAVAILABLE" });
  });

  it("rejects with AIP_ERR_SOCKET_BUSY when the deadline passes in the queue, and leaves the queue", async () => {
    const s = new Slots(1, 5, "t");
    await s.acquire(far());
    const err = await s.acquire(Date.now() + 20).catch((e: unknown) => e);
    expect((err as AipError).code).toBe("AIP_ERR_SOCKET_BUSY");
    expect(s.stats().queued).toBe(0);
  });

  it("turns a deadline abort while queued into SOCKET_BUSY and a client abort into its reason", async () => {
    const s = new Slots(1, 5, "t");
    await s.acquire(far());
    const c1 = new Cancellation();
    const p1 = s.acquire(far(), c1);
    c1.abort(new AipError("AIP_ERR_TIMEOUT", "deadline"));
    await expect(p1).rejects.toMatchObject({ code: "AIP_ERR_SOCKET_BUSY" });
    const c2 = new Cancellation();
    const p2 = s.acquire(far(), c2);
    c2.abort(new AipError("AIP_ERR_CANCELLED", "client left"));
    await expect(p2).rejects.toMatchObject({ code: "AIP_ERR_CANCELLED" });
  });

  it("admits queued callers at once when resized up", async () => {
    const s = new Slots(1, 5, "t");
    await s.acquire(far());
    const w = s.acquire(far());
    s.resize(2);
    expect(typeof (await w)).toBe("function");
  });

  it("serves waiting connections in turn, not first come first served", async () => {
    const s = new Slots(1, 20, "t");
    const first = await s.acquire(far(), undefined, 1);
    const order: string[] = [];
    const wait = (conn: number, tag: string) =>
      s.acquire(far(), undefined, conn).then((release) => {
        order.push(tag);
        release();
      });
    // Connection 1 queues three, then 2 and 3 one each: the turns go 1, 2, 3, 1, 1 (first come, first
    // served would give 1, 1, 1, 2, 3).
    const all = Promise.all([wait(1, "1a"), wait(1, "1b"), wait(1, "1c"), wait(2, "2a"), wait(3, "3a")]);
    expect(s.stats()).toMatchObject({ inflight: 1, queued: 5, connections: 3 });
    first();
    await all;
    expect(order).toEqual(["1a", "2a", "3a", "1b", "1c"]);
    expect(s.stats()).toMatchObject({ inflight: 0, queued: 0, connections: 0 });
  });

  it("alone a connection may hold every slot; beside others, floor(size / connections) at least 1", async () => {
    const s = new Slots(6, 20, "t");
    const held = await Promise.all([1, 2, 3, 4, 5, 6].map(() => s.acquire(far(), undefined, 1)));
    expect(s.fairShare()).toBe(6);
    let moreServed = false;
    const more = s.acquire(far(), undefined, 1).then((r) => ((moreServed = true), r));
    const other = s.acquire(far(), undefined, 2);
    expect(s.fairShare()).toBe(3);
    // Connection 1 holds 6 against its share of 3: the freed slot goes to connection 2, which queued later.
    held[0]!();
    const releaseOther = await other;
    expect(moreServed).toBe(false);
    expect(s.stats()).toMatchObject({ inflight: 6, queued: 1, connections: 2 });
    // Connection 2 leaves: connection 1 is alone again and may use every slot.
    releaseOther();
    (await more)();
    for (const r of held.slice(1)) r();
    expect(s.stats()).toMatchObject({ inflight: 0, queued: 0, connections: 0 });
  });
});
