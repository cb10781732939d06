import { describe, expect, it } from "vitest";
import { Deadlines, type Expiring } from "../../../protocol/util/deadlines.js";

/** A member that records when it expired (ms after the test's start) into `log`. */
function member(name: string, inMs: number, log: string[], onExpire?: () => void): Expiring {
  return {
    expiresAt: performance.now() + inMs,
    expire: () => {
      log.push(name);
      onExpire?.();
    },
  };
}

const until = async (check: () => boolean, ms = 2000): Promise<void> => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
};

describe("Deadlines: many deadlines behind one timer", () => {
  it("expires each member once, at or after its deadline, in deadline order", async () => {
    const d = new Deadlines();
    const log: string[] = [];
    const t0 = performance.now();
    const at: Record<string, number> = {};
    const m = (name: string, ms: number): Expiring => member(name, ms, log, () => (at[name] = performance.now() - t0));
    d.add(m("late", 60));
    d.add(m("early", 20));
    d.add(m("middle", 40));
    await until(() => log.length === 3);
    expect(log).toEqual(["early", "middle", "late"]);
    expect(at.early!).toBeGreaterThanOrEqual(19);
    expect(at.middle!).toBeGreaterThanOrEqual(39);
    expect(at.late!).toBeGreaterThanOrEqual(59);
    expect(d.size).toBe(0);
  });

  it("never expires a member deleted before its deadline", async () => {
    const d = new Deadlines();
    const log: string[] = [];
    const gone = member("gone", 15, log);
    d.add(gone);
    d.add(member("kept", 30, log));
    d.delete(gone);
    await until(() => log.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(log).toEqual(["kept"]);
  });

  it("re-arms for a member added during another's expiry, and for one earlier than the armed deadline", async () => {
    const d = new Deadlines();
    const log: string[] = [];
    d.add(member("first", 10, log, () => d.add(member("added-while-expiring", 15, log))));
    d.add(member("far", 200, log));
    d.add(member("sooner", 5, log));
    await until(() => log.length === 3);
    expect(log).toEqual(["sooner", "first", "added-while-expiring"]);
    expect(d.size).toBe(1);
    await until(() => log.length === 4);
    expect(log[3]).toBe("far");
  });
});
