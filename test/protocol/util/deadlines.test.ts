/**
 * Deadlines behind one timer (protocol/util/deadlines.ts), on a clock the test controls and vitest's
 * fake timers: what expires when does not depend on the machine's speed.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Deadlines, type Expiring } from "../../../protocol/util/deadlines.js";

let clock = 0;
beforeEach(() => {
  clock = 500;
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Advance the test's clock and its timers together, a millisecond at a time. */
async function advance(ms: number): Promise<void> {
  for (let i = 0; i < ms; i++) {
    clock += 1;
    await vi.advanceTimersByTimeAsync(1);
  }
}

/** A member that records its name and the clock when it expired into `log`. */
function member(name: string, inMs: number, log: [string, number][], onExpire?: () => void): Expiring {
  return {
    expiresAt: clock + inMs,
    expire: () => {
      log.push([name, clock]);
      onExpire?.();
    },
  };
}

describe("Deadlines: many deadlines behind one timer", () => {
  it("expires each member once, at its deadline, in deadline order", async () => {
    const d = new Deadlines(() => clock);
    const log: [string, number][] = [];
    d.add(member("late", 60, log));
    d.add(member("early", 20, log));
    d.add(member("middle", 40, log));
    await advance(19);
    expect(log).toEqual([]);
    await advance(100);
    expect(log).toEqual([
      ["early", 520],
      ["middle", 540],
      ["late", 560],
    ]);
    expect(d.size).toBe(0);
  });

  it("expires together, earliest first, what a late timer finds due", async () => {
    const d = new Deadlines(() => clock);
    const log: [string, number][] = [];
    d.add(member("b", 12, log));
    d.add(member("a", 10, log));
    // The process was busy: the clock moved on before the timer could fire.
    clock += 50;
    await vi.advanceTimersByTimeAsync(10);
    expect(log.map(([n]) => n)).toEqual(["a", "b"]);
  });

  it("never expires a member deleted before its deadline", async () => {
    const d = new Deadlines(() => clock);
    const log: [string, number][] = [];
    const gone = member("gone", 15, log);
    d.add(gone);
    d.add(member("kept", 30, log));
    d.delete(gone);
    await advance(100);
    expect(log).toEqual([["kept", 530]]);
  });

  it("re-arms for a member added during another's expiry, and for one earlier than the armed deadline", async () => {
    const d = new Deadlines(() => clock);
    const log: [string, number][] = [];
    d.add(member("first", 10, log, () => d.add(member("added-while-expiring", 15, log))));
    d.add(member("far", 200, log));
    d.add(member("sooner", 5, log));
    await advance(30);
    expect(log).toEqual([
      ["sooner", 505],
      ["first", 510],
      ["added-while-expiring", 525],
    ]);
    expect(d.size).toBe(1);
    await advance(200);
    expect(log[3]).toEqual(["far", 700]);
  });
});
