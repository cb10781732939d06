/**
 * Cost classes between agents (orchestrator/pool/cost.ts) on a clock the test controls: the pacing
 * rules themselves, with no socket and no wall-clock time, so that a slow or loaded machine cannot
 * change what is measured. The socket test beside it (cost.test.ts) checks the pool's wiring.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  AgentCosts,
  HEAVY_ACTIVE_MS,
  HEAVY_MAX_PACE_MS,
  HEAVY_MAX_WAIT_MS,
  NOT_HELD,
  type AgentCost,
  type CostDone,
} from "../../../orchestrator/pool/cost.js";

let clock = 0;
beforeEach(() => {
  clock = 1_000;
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Advance the test's clock and its timers together. */
async function advance(ms: number): Promise<void> {
  clock += ms;
  await vi.advanceTimersByTimeAsync(ms);
}

function agents(): { costs: AgentCosts; heavy: AgentCost; cheap: AgentCost } {
  const costs = new AgentCosts(() => clock);
  const heavy = costs.add();
  const cheap = costs.add();
  for (let i = 0; i < 3; i++) heavy.record(20);
  return { costs, heavy, cheap };
}

/** Turns asked for at once, each noted when it is granted. */
function ask(cost: AgentCost, n: number): { granted: (CostDone | undefined)[]; at: number[] } {
  const granted: (CostDone | undefined)[] = Array.from({ length: n }, () => undefined);
  const at: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = cost.turn();
    if (typeof t === "function") {
      granted[i] = t;
      at[i] = clock;
    } else
      void t.then((done) => {
        granted[i] = done;
        at[i] = clock;
      });
  }
  return { granted, at };
}

describe("AgentCost on a controlled clock", () => {
  it("alone, the heavy agent's calls run side by side: every turn is granted at once and holds nothing", () => {
    const { heavy } = agents();
    expect(heavy.meanMs).toBe(20);
    expect(heavy.heavy()).toBe(false);
    const { granted } = ask(heavy, 3);
    expect(granted).toEqual([NOT_HELD, NOT_HELD, NOT_HELD]);
  });

  it("beside a cheap agent answered lately, its calls go one at a time, paced by the last call's time", async () => {
    const { heavy, cheap } = agents();
    cheap.record(1);
    expect(heavy.heavy()).toBe(true);
    const { granted, at } = ask(heavy, 3);
    expect(granted.map((g) => g !== undefined)).toEqual([true, false, false]);
    // The first call runs a while on the injected clock; the cheap agent keeps answering meanwhile.
    await advance(10);
    cheap.record(1);
    granted[0]!();
    // The next starts no sooner than the last one took after its answer.
    await advance(9);
    expect(granted[1]).toBeUndefined();
    await advance(1);
    expect(granted[1]).toBeDefined();
    expect(at[1]).toBe(1_000 + 20);
    expect(granted[2]).toBeUndefined();
  });

  it("the pace after a long call is at most HEAVY_MAX_PACE_MS", async () => {
    const { heavy, cheap } = agents();
    cheap.record(1);
    const first = heavy.turn() as CostDone;
    await advance(HEAVY_ACTIVE_MS - 1);
    cheap.record(1);
    const { granted, at } = ask(heavy, 1);
    first();
    await advance(HEAVY_MAX_PACE_MS);
    expect(granted[0]).toBeDefined();
    expect(at[0]).toBe(1_000 + HEAVY_ACTIVE_MS - 1 + HEAVY_MAX_PACE_MS);
  });

  it("a call that waited HEAVY_MAX_WAIT_MS starts anyway, beside the one holding the turn; none is refused", async () => {
    const { heavy, cheap } = agents();
    cheap.record(1);
    const holder = heavy.turn() as CostDone;
    expect(typeof holder).toBe("function");
    const { granted, at } = ask(heavy, 1);
    await advance(HEAVY_MAX_WAIT_MS - 1);
    expect(granted[0]).toBeUndefined();
    await advance(1);
    expect(granted[0]).toBeDefined();
    expect(at[0]).toBe(1_000 + HEAVY_MAX_WAIT_MS);
    holder();
  });

  it("once the cheap agent has been quiet for HEAVY_ACTIVE_MS, waiting calls are no longer paced", async () => {
    const { heavy, cheap } = agents();
    cheap.record(1);
    const holder = heavy.turn() as CostDone;
    const { granted } = ask(heavy, 2);
    await advance(HEAVY_ACTIVE_MS + 1);
    expect(heavy.heavy()).toBe(false);
    holder();
    await advance(0);
    expect(granted.every((g) => g !== undefined)).toBe(true);
  });
});
