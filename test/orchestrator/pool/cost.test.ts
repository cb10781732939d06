/**
 * Cost classes between agents (orchestrator/pool/cost.ts, docs/architecture.md "Cost classes between
 * agents"): over real sockets, the pool asks for each call's turn, granted at once while the agent is
 * alone, and every call is answered. The pacing rules are asserted on a controlled clock in
 * cost.clock.test.ts, so that no assertion here depends on the machine's speed.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { httpRequest } from "../../../protocol/transport/client.js";
import { echo, startAgency, type Agency } from "../harness.js";

let agency: Agency;
beforeAll(async () => {
  agency = await startAgency([
    { name: "cheap", capabilities: ["echo"] },
    { name: "heavy", capabilities: ["slow_op"] },
  ]);
}, 60_000);
afterAll(async () => {
  await agency?.stop();
});

const heavyPool = () => agency.orchestrator.agents.find((a) => a.name === "heavy")!.pool;

async function call(action: string, trace: string, constraints: Record<string, unknown> = {}): Promise<unknown> {
  const r = await httpRequest(agency.socket, {
    body: JSON.stringify(echo({ action, trace_id: trace, constraints })),
    timeoutMs: 20_000,
  });
  return JSON.parse(r.body);
}

/** Three heavy calls at once (each waits `delay_ms` at the agent); all answered. */
async function threeHeavy(tag: string): Promise<void> {
  const answers = await Promise.all([0, 1, 2].map((i) => call("slow_op", `${tag}-${i}`, { delay_ms: 20 })));
  answers.forEach((a, i) => expect(a).toMatchObject({ status: "success", trace_id: `${tag}-${i}`, agent: "heavy" }));
}

/** Whether each turn the heavy pool asked for was granted at once (a function) or waited (a promise). */
function watchTurns(): { atOnce: boolean[]; restore: () => void } {
  const cost = heavyPool().cost;
  const original = cost.turn.bind(cost);
  const atOnce: boolean[] = [];
  const spy = vi.spyOn(cost, "turn").mockImplementation(() => {
    const t = original();
    atOnce.push(typeof t === "function");
    return t;
  });
  return { atOnce, restore: () => spy.mockRestore() };
}

describe("a heavy agent beside a cheap one", () => {
  it("alone, the heavy agent's calls run side by side", async () => {
    // Its mean call time is learnt from calls one after another.
    for (let i = 0; i < 3; i++) await call("slow_op", `warm-${i}`, { delay_ms: 20 });
    expect(heavyPool().cost.meanMs).toBeGreaterThanOrEqual(20);
    // No cheap call answered lately (the cheap agent has answered none at all): not heavy, not paced.
    expect(heavyPool().cost.heavy()).toBe(false);
    const turns = watchTurns();
    try {
      await threeHeavy("alone");
    } finally {
      turns.restore();
    }
    // Each call's turn was granted at once: none waited for another (the pacing rules themselves, on a
    // clock the test controls: cost.clock.test.ts).
    expect(turns.atOnce).toEqual([true, true, true]);
  });

  it("while cheap calls are served, its calls wait their turn, and every one is answered", async () => {
    let running = true;
    let cheapAnswered = 0;
    const cheap = (async () => {
      while (running) {
        const a = await call("echo", `cheap-${cheapAnswered}`);
        expect(a).toMatchObject({ status: "success", agent: "cheap" });
        cheapAnswered++;
      }
    })();
    await vi.waitFor(() => expect(heavyPool().cost.heavy()).toBe(true), { timeout: 10_000, interval: 5 });
    const turns = watchTurns();
    try {
      await threeHeavy("beside");
    } finally {
      turns.restore();
      running = false;
      await cheap;
    }
    expect(cheapAnswered).toBeGreaterThan(0);
    // Every heavy call went through the pool's turn; while the agent stays heavy the second and third
    // wait for the first (how long, and the wait bound, are asserted on a controlled clock in
    // cost.clock.test.ts; here a loaded machine may end the heavy spell between calls).
    expect(turns.atOnce).toHaveLength(3);
    expect(turns.atOnce[0]).toBe(true);
  });
});
