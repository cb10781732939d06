/**
 * Cost classes between agents (orchestrator/pool/cost.ts, docs/performance.md "CPU-heavy agents
 * paced"): over real sockets, an agent whose calls take far longer than another's goes one call at a
 * time while the other is being served, and as many as it likes when it is alone; none is refused.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { HEAVY_MAX_WAIT_MS } from "../../../orchestrator/pool/cost.js";
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

describe("a heavy agent beside a cheap one", () => {
  it("alone, the heavy agent's calls run side by side", async () => {
    // Its mean call time is learnt from calls one after another.
    for (let i = 0; i < 3; i++) await call("slow_op", `warm-${i}`, { delay_ms: 20 });
    expect(heavyPool().cost.meanMs).toBeGreaterThanOrEqual(20);
    // No cheap call answered lately (the cheap agent has answered none at all): not heavy, not paced.
    expect(heavyPool().cost.heavy()).toBe(false);
    const done = threeHeavy("alone");
    await vi.waitFor(() => expect(heavyPool().stats().inflight).toBe(3), { timeout: 10_000, interval: 1 });
    await done;
  });

  it("while cheap calls are served, its calls go one at a time, and every one is answered", async () => {
    let running = true;
    let cheapAnswered = 0;
    /** The first moment two heavy calls ran at once: ms after the three were sent, and whether it was heavy then. */
    let overlap: { afterMs: number; heavy: boolean } | undefined;
    let t0 = Infinity;
    const look = (): void => {
      if (overlap === undefined && heavyPool().stats().inflight > 1)
        overlap = { afterMs: performance.now() - t0, heavy: heavyPool().cost.heavy() };
    };
    const cheap = (async () => {
      while (running) {
        const a = await call("echo", `cheap-${cheapAnswered}`);
        expect(a).toMatchObject({ status: "success", agent: "cheap" });
        cheapAnswered++;
        look();
      }
    })();
    await vi.waitFor(() => expect(heavyPool().cost.heavy()).toBe(true), { timeout: 10_000, interval: 5 });
    t0 = performance.now();
    const heavy = threeHeavy("beside");
    const sample = setInterval(look, 1);
    await heavy;
    clearInterval(sample);
    running = false;
    await cheap;
    expect(cheapAnswered).toBeGreaterThan(0);
    // One at a time. Two at once only as designed: a call that waited HEAVY_MAX_WAIT_MS for its turn starts
    // anyway (a loaded machine slows the one holding it), or the agent was no longer heavy then (the
    // cheap calls slowed down to within HEAVY_RATIO of it).
    if (overlap !== undefined && overlap.heavy) expect(overlap.afterMs).toBeGreaterThanOrEqual(HEAVY_MAX_WAIT_MS);
  });
});
