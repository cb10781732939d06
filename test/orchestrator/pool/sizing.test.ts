import { afterEach, describe, expect, it } from "vitest";
import { httpRequest, invokeHttp } from "../../../protocol/transport/client.js";
import { echo, startAgency, until, type Agency } from "../harness.js";

let agency: Agency | undefined;
afterEach(async () => {
  await agency?.stop();
  agency = undefined;
});

const healthz = async (name: string) =>
  JSON.parse((await httpRequest(agency!.socket, { path: "/healthz" })).body).agents[name] as Record<string, any>;

describe("adaptive pool over a real agent", () => {
  it("grows to the demand under load and shrinks when it goes (seen through /healthz)", async () => {
    agency = await startAgency([{ name: "variable", max_concurrent: 12 }]);
    expect((await healthz("variable")).pool_size).toBe(5);
    // 12 clients at once: callers wait, the pool grows to the demand, here max_concurrent.
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        for (let i = 0; i < 6; i++) await invokeHttp(agency!.socket, echo({ constraints: { delay_ms: 80 } }));
      }),
    );
    const grown = await healthz("variable");
    // The demand seen: up to the 12 clients (a loaded machine delivers a few of them late).
    expect(grown.pool_size).toBeGreaterThanOrEqual(8);
    expect(grown.pool_size).toBeLessThanOrEqual(12);
    expect(grown.p95_latency_ms).toBeGreaterThan(50);
    // One client at a time: once the peak of 12 has left the demand window (100-200 calls), it
    // shrinks one step per call down to 3.
    let shrunk = await healthz("variable");
    for (let round = 0; round < 10 && shrunk.pool_size !== 3; round++) {
      for (let i = 0; i < 110; i++) await invokeHttp(agency.socket, echo());
      shrunk = await healthz("variable");
    }
    expect(shrunk.pool_size).toBe(3);
  });

  it("under steady load it meets the demand, whatever its size was before (no history)", async () => {
    agency = await startAgency([{ name: "steady", max_concurrent: 64 }]);
    const load = async (): Promise<number> => {
      await Promise.all(
        Array.from({ length: 40 }, async () => {
          for (let i = 0; i < 8; i++) await invokeHttp(agency!.socket, echo({ constraints: { delay_ms: 2 } }));
        }),
      );
      return (await healthz("steady")).pool_size as number;
    };
    // 40 clients of a 2 ms agent: the old rule (P95 under 50 ms) left the pool at 5 or shrank it to 3, so
    // callers queued behind 5 connections while the agent admits 64.
    expect(await load()).toBeGreaterThanOrEqual(10);
    expect(await load()).toBeGreaterThanOrEqual(10);
  });

  it("answers AIP_ERR_SOCKET_BUSY when the pool and its queue are full", async () => {
    agency = await startAgency([{ name: "tiny", max_concurrent: 2 }], { max_queue: 3 });
    const slow = Array.from({ length: 5 }, () => invokeHttp(agency!.socket, echo({ constraints: { delay_ms: 600 } })));
    await until(
      async () => {
        const h = await healthz("tiny");
        return h.concurrent_requests === 2 && h.queue_depth === 3;
      },
      10_000,
      "2 in flight and 3 queued",
    );
    const rejected = await invokeHttp(agency.socket, echo());
    expect(rejected.status).toBe(503);
    expect(rejected.json).toMatchObject({ status: "error", error: { type: "AIP_ERR_SOCKET_BUSY" } });
    expect(String((rejected.json.error as Record<string, unknown>).detail)).toContain("wait queue is full (3)");
    const done = await Promise.all(slow);
    expect(done.every((d) => d.json.status === "success")).toBe(true);
    const metrics = (await httpRequest(agency.socket, { path: "/metrics" })).body;
    expect(metrics).toMatch(
      /aip_requests_total\{agent="tiny",version="1.0.0",action="echo",status="AIP_ERR_SOCKET_BUSY"\} 1/,
    );
    expect(metrics).toMatch(/aip_queue_depth\{agent="tiny",version="1.0.0"\} 0/);
    expect(metrics).toMatch(/aip_pool_size\{agent="tiny",version="1.0.0"\} 2/);
  });

  it("a wait in the queue past the deadline is AIP_ERR_SOCKET_BUSY", async () => {
    agency = await startAgency([{ name: "one", max_concurrent: 1 }]);
    const hog = invokeHttp(agency.socket, echo({ constraints: { delay_ms: 1000 } }));
    await until(async () => (await healthz("one")).concurrent_requests === 1, 20_000, "hog in flight");
    const r = await invokeHttp(agency.socket, echo({ constraints: { timeout_ms: 100 } }));
    expect(r.json).toMatchObject({ error: { type: "AIP_ERR_SOCKET_BUSY" } });
    expect(String((r.json.error as Record<string, unknown>).detail)).toMatch(/waited \d+ ms for a pool slot/);
    await hog;
  });
});
