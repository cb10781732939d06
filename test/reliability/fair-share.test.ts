/**
 * Fair sharing of an agent's pool between client connections (docs/architecture.md: fair sharing
 * between connections), over real sockets and a real agent process: one connection pipelining many
 * slow requests does not put them all ahead of another connection's one, and does not take the
 * shared wait queue from it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { httpRequest } from "../../protocol/transport/client.js";
import { ndjsonSession, until, type NdjsonSession } from "../helpers.js";
import { startAgency, type Agency } from "../orchestrator/harness.js";

/** Each call holds its slot this long at the agent; 4 slots. */
const DELAY_MS = 100;
const SLOTS = 4;

let agency: Agency | undefined;
let flood: NdjsonSession | undefined;
afterEach(async () => {
  flood?.close();
  flood = undefined;
  await agency?.stop();
  agency = undefined;
});

const echo = (trace: string): Record<string, unknown> & { trace_id: string } => ({
  action: "echo",
  trace_id: trace,
  context: { source_code: trace },
  constraints: { delay_ms: DELAY_MS, timeout_ms: 20_000 },
});

async function pool(): Promise<{ inflight: number; queued: number; connections: number }> {
  const h = JSON.parse((await httpRequest(agency!.socket, { path: "/healthz" })).body) as {
    agents: Record<string, { pool: { inflight: number; queued: number; connections: number } }>;
  };
  return h.agents.slow!.pool;
}

/** Pipeline `n` slow echoes on one NDJSON connection; resolves each answer in `answers` as it comes. */
function pipeline(session: NdjsonSession, n: number, answers: Record<string, any>[]): Promise<unknown> {
  return Promise.all(
    Array.from({ length: n }, (_, i) => session.send(echo(`flood-${i}`)).then((a) => answers.push(a))),
  );
}

describe("fair share of an agent's pool between connections", () => {
  it("a connection with 60 requests queued does not go ahead of another connection's one", async () => {
    agency = await startAgency([{ name: "slow", max_concurrent: SLOTS, timeout_ms: 20_000 }]);
    flood = await ndjsonSession(agency.socket);
    const floodAnswers: Record<string, any>[] = [];
    const flooded = pipeline(flood, 60, floodAnswers);
    await until(async () => (await pool()).queued >= 50, 20_000, "the flood to queue");

    const other = await httpRequest(agency.socket, { body: JSON.stringify(echo("other-1")), timeoutMs: 20_000 });
    const answeredBefore = floodAnswers.length;
    const reply = JSON.parse(other.body) as Record<string, any>;
    expect(reply.status).toBe("success");
    expect(reply.trace_id).toBe("other-1");
    // First come, first served, it would wait behind the ~56 queued (14 rounds of 4 slots); shared
    // fairly, it takes the next free slot: at most the 4 in flight and one more round are answered first.
    expect(answeredBefore).toBeLessThanOrEqual(2 * SLOTS);

    await flooded;
    expect(floodAnswers.map((a) => a.status)).toEqual(Array(60).fill("success"));
  });

  it("while one connection holds the agent alone it uses every slot; beside another, its share", async () => {
    agency = await startAgency([{ name: "slow", max_concurrent: SLOTS, timeout_ms: 20_000 }]);
    flood = await ndjsonSession(agency.socket);
    const floodAnswers: Record<string, any>[] = [];
    const flooded = pipeline(flood, 24, floodAnswers);
    await until(async () => (await pool()).inflight === SLOTS, 20_000, "the flood to fill the slots");
    expect(await pool()).toMatchObject({ inflight: SLOTS, connections: 1 });

    // A second connection with its own backlog: from then on the slots are split 2 and 2.
    const second = await ndjsonSession(agency.socket);
    try {
      const secondAnswers: Record<string, any>[] = [];
      const both = pipeline(second, 8, secondAnswers);
      await until(async () => (await pool()).connections === 2, 20_000, "the second connection to queue");
      await until(async () => secondAnswers.length >= 4, 20_000, "the second connection's first answers");
      // Its 8 requests finish in 4 rounds of 2 slots while the flood still has a backlog.
      await both;
      expect(secondAnswers.map((a) => a.status)).toEqual(Array(8).fill("success"));
      expect(floodAnswers.length).toBeLessThan(24);
    } finally {
      second.close();
    }
    await flooded;
    expect(floodAnswers.map((a) => a.status)).toEqual(Array(24).fill("success"));
  });

  it("a full wait queue makes room for another connection: the one waiting the most gives up its newest", async () => {
    agency = await startAgency([{ name: "slow", max_concurrent: SLOTS, timeout_ms: 20_000 }], { max_queue: 8 });
    flood = await ndjsonSession(agency.socket);
    const floodAnswers: Record<string, any>[] = [];
    // 4 in flight, 8 queued, 8 refused at once (its own connection waits the most).
    const flooded = pipeline(flood, 20, floodAnswers);
    await until(async () => (await pool()).queued === 8, 20_000, "the queue to fill");

    const other = await httpRequest(agency.socket, { body: JSON.stringify(echo("other-2")), timeoutMs: 20_000 });
    const reply = JSON.parse(other.body) as Record<string, any>;
    expect(reply).toMatchObject({ status: "success", trace_id: "other-2" });

    await flooded;
    const byTrace = new Map(floodAnswers.map((a) => [a.trace_id as string, a]));
    const busy = floodAnswers.filter((a) => a.status === "error");
    expect(busy.map((a) => a.error.type)).toEqual(Array(9).fill("AIP_ERR_SOCKET_BUSY"));
    // The newest of the 8 queued (flood-11) made room for the other connection's request.
    expect(byTrace.get("flood-11")!.error.detail).toMatch(/had the most requests waiting \(8\)/);
    for (let i = 12; i < 20; i++) expect(byTrace.get(`flood-${i}`)!.error.detail).toMatch(/wait queue is full \(8\)/);
    expect(floodAnswers.filter((a) => a.status === "success")).toHaveLength(11);
  });
});
