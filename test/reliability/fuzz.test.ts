/**
 * Bad input: fast-check and raw bytes against the orchestrator's front door and the
 * agent runtime (agent-dummy), both real processes. Every complete frame must be answered with a valid
 * AIP-1 envelope, nothing may crash, RSS may grow by < 64 MB (the heap settles higher the more well-behaved requests a fast machine serves meanwhile), well-behaved clients are served meanwhile.
 * Full run (`npm run test:reliability`): >= 100,000 inputs; inside `npm test`: a short run.
 */
import fc from "fast-check";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ndjsonExchange } from "../../protocol/transport/client.js";
import { AGENT_LIMITS } from "../../protocol/contract/limits.js";
import { FULL, pidAlive, rssMiB, startRealAgency, type RealAgency } from "./lib/agency.js";
import { bogusHttpArb, framesIn, lineArb, type Line } from "./lib/inputs.js";
import { httpInvoke, isEnvelope, rawExchange, rawHttp } from "./lib/raw.js";
import { steadyClients, type Steady } from "./lib/steady.js";
import { DUMMY, ROOT } from "../helpers.js";

const HEADERS_TIMEOUT_MS = 1000;
/**
 * requestReceiveTimeoutMs of the front door (limits.request_receive_timeout_ms) and of the agent runtime
 * (AIP_REQUEST_RECEIVE_TIMEOUT_MS): short, so that bodies that stop short are answered while the other
 * tests run; long enough that no request the fuzz sends whole is cut off on a starved host.
 */
const RECEIVE_TIMEOUT_MS = 5000;
/**
 * NDJSON lines per target, HTTP cases per target, over-limit cases per target, slowloris connections,
 * well-behaved workers (each sends as fast as it is answered: the short run keeps one, so that the fuzz
 * has the cores).
 */
const SCALE = FULL
  ? { lines: 50_000, http: 5_000, bogus: 1_000, huge: 6, slow: 100, steady: 4 }
  : { lines: 600, http: 80, bogus: 50, huge: 1, slow: 10, steady: 1 };
const SEED = Number(process.env.AIP_FUZZ_SEED ?? 8);
const MiB = 1024 * 1024;

/** fc.assert, but the report names the seed and the error, not a megabyte-long counterexample. */
async function check<T>(property: fc.IAsyncProperty<T>, params: fc.Parameters<T>): Promise<void> {
  const details = await fc.check(property, params);
  if (details.failed) {
    const err = details.errorInstance as Error | undefined;
    throw new Error(
      `fuzz failed after ${details.numRuns} runs (seed ${details.seed}, path ${details.counterexamplePath}): ${String(err?.message ?? err).slice(0, 500)}`,
    );
  }
}

const startedAt = Date.now();
let agency: RealAgency;
let steady: Steady;
let before: { orchestrator: number; agent: number };
let pids: { orchestrator: number; agent: number };
/** The hostile-framing test's bodies that stop short, sent from the start (see there). */
let cut: Promise<{ data: Buffer; closed: boolean }[][]>;
const counted = { ndjson_lines: 0, http_bodies: 0, bogus_http: 0, over_limit: 0, mixed: 0, slowloris: 0, hostile: 0 };

beforeAll(async () => {
  // Vetting has suites of its own; here it would only add to the start.
  agency = await startRealAgency(
    {
      headers_timeout_ms: HEADERS_TIMEOUT_MS,
      request_receive_timeout_ms: RECEIVE_TIMEOUT_MS,
      health_interval_ms: 60_000,
    },
    () => ({
      vetting: "off",
      agents: [
        {
          name: "dummy",
          command: [DUMMY],
          manifest: join(ROOT, "manifests/dummy.json"),
          env: { AIP_REQUEST_RECEIVE_TIMEOUT_MS: String(RECEIVE_TIMEOUT_MS) },
        },
      ],
    }),
  );
  const h = await agency.health();
  pids = { orchestrator: h.pid, agent: h.agents.dummy!.pid! };
  // Warm both processes up before the baseline, so first-use allocations are not counted as growth.
  for (let i = 0; i < 3; i++)
    await ndjsonExchange(agency.socket, '{"action":"echo","context":{},"constraints":{}}\n'.repeat(200));
  // A large request too: the front door decodes those in a worker thread it starts on the first one, a
  // first-use cost the fuzz's large bodies would otherwise count as growth.
  const large = JSON.stringify({ action: "echo", context: { source_code: "x".repeat(256 * 1024) }, constraints: {} });
  for (let i = 0; i < 3; i++) await ndjsonExchange(agency.socket, `${large}\n`);
  before = { orchestrator: rssMiB(pids.orchestrator), agent: rssMiB(pids.agent) };
  steady = steadyClients(agency.socket, SCALE.steady);
  // A body that stops short is answered only at requestReceiveTimeoutMs: sent now, it waits while the
  // other tests run, and the hostile-framing test (the last) checks the answers. The wait is bounded below
  // the default deadline (30 s), so an answer in it comes from the configured one.
  cut = Promise.all(
    Object.values(targets()).map((socket) =>
      Promise.all(SHORT.map((b) => rawExchange(socket, Buffer.from(b), 25_000, { end: false }))),
    ),
  );
}, 60_000);

afterAll(async () => {
  await agency?.cleanup();
});

const targets = () => ({ "front door": agency.socket, "agent runtime": agency.agentSocket });
const HEAD = "POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Type: application/json\r\n";
/** Requests whose body stops short (the client does not half-close). */
const SHORT = [`${HEAD}Content-Length: 100\r\n\r\n{"action":`, `${HEAD}Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n`];

describe.sequential("fuzz: bad input", () => {
  for (const target of ["front door", "agent runtime"] as const) {
    it(`NDJSON (${target}): every frame answered in order with a valid envelope`, { timeout: 600_000 }, async () => {
      const socket = targets()[target];
      let first = 0;
      const batch = fc.array(lineArb, { minLength: 100, maxLength: 200 });
      await check(
        fc.asyncProperty(batch, async (lines: Line[]) => {
          // A valid first line fixes the framing (an uppercase first byte would mean HTTP).
          const head = `{"action":"echo","context":{},"constraints":{},"trace_id":"first-${++first}"}\n`;
          const parts: Buffer[] = [Buffer.from(head)];
          const expected: (string | undefined)[] = ["first-" + first];
          for (const l of lines) {
            const piece = Buffer.concat([l.bytes, Buffer.from("\n")]);
            const n = framesIn(piece);
            for (let i = 0; i < n; i++) expected.push(i === 0 ? l.trace : undefined);
            parts.push(piece);
          }
          const answers = await ndjsonExchange(socket, Buffer.concat(parts), { timeoutMs: 30_000 });
          counted.ndjson_lines += lines.length;
          expect(answers.length).toBe(expected.length);
          answers.forEach((a, i) => {
            expect(isEnvelope(a), a.slice(0, 200)).toBe(true);
            if (expected[i]) expect(JSON.parse(a).trace_id).toBe(expected[i]);
          });
        }),
        { numRuns: Math.ceil(SCALE.lines / 150), seed: SEED, endOnFailure: true },
      );
    });

    it(
      `HTTP (${target}): fuzzed bodies answered with envelopes; bogus HTTP answered or closed`,
      { timeout: 600_000 },
      async () => {
        const socket = targets()[target];
        // Valid HTTP framing, fuzzed bodies, pipelined on one keep-alive connection per batch.
        const bodies = fc.array(lineArb, { minLength: 20, maxLength: 60 });
        await check(
          fc.asyncProperty(bodies, async (lines: Line[]) => {
            const { responses, closed } = await rawHttp(
              socket,
              Buffer.concat(lines.map((l) => httpInvoke(l.bytes))),
              30_000,
              lines.length,
            );
            counted.http_bodies += lines.length;
            expect(closed).toBe(true);
            expect(responses.length).toBe(lines.length);
            responses.forEach((r, i) => {
              expect(isEnvelope(r.body), r.body.slice(0, 200)).toBe(true);
              if (lines[i]!.trace) expect(JSON.parse(r.body).trace_id).toBe(lines[i]!.trace);
            });
          }),
          { numRuns: Math.ceil(SCALE.http / 40), seed: SEED, endOnFailure: true },
        );
        // Bogus HTTP: whatever is answered is an envelope. An incomplete request is not a frame: the server
        // may keep it until requestReceiveTimeoutMs (docs/aip-1.md "Limits"); we stop waiting after 2 s.
        await check(
          fc.asyncProperty(fc.array(bogusHttpArb, { minLength: 50, maxLength: 50 }), async (payloads: Buffer[]) => {
            const results = await Promise.all(payloads.map((p) => rawHttp(socket, p, 2000)));
            counted.bogus_http += payloads.length;
            results.forEach((r, i) => {
              const what = JSON.stringify(payloads[i]!.subarray(0, 120).toString("latin1"));
              for (const res of r.responses)
                expect(isEnvelope(res.body), `${what} → ${res.status} ${res.body.slice(0, 200)}`).toBe(true);
            });
          }),
          { numRuns: Math.ceil(SCALE.bogus / 50), seed: SEED, endOnFailure: true },
        );
        // Both framings on one connection: HTTP then an NDJSON line (400, closed), NDJSON then HTTP text (an error per line).
        const valid = Buffer.from('{"action":"echo","context":{},"constraints":{},"trace_id":"mixed-1"}');
        const httpThenNd = await rawHttp(
          socket,
          Buffer.concat([httpInvoke(valid), valid, Buffer.from("\n")]),
          10_000,
          2,
        );
        expect(httpThenNd.responses.map((r) => r.status)).toEqual([200, 400]);
        expect(httpThenNd.responses.every((r) => isEnvelope(r.body))).toBe(true);
        const ndThenHttp = await ndjsonExchange(socket, Buffer.concat([valid, Buffer.from("\n"), httpInvoke(valid)]));
        expect(ndThenHttp.length).toBe(framesIn(Buffer.concat([valid, Buffer.from("\n"), httpInvoke(valid)])));
        expect(ndThenHttp.every(isEnvelope)).toBe(true);
        counted.mixed += 2;
      },
    );

    it(`over the limit (${target}): 413 envelopes, memory bounded`, { timeout: 120_000 }, async () => {
      const socket = targets()[target];
      // An agent accepts the forwarding headroom beyond the front door's limit (docs/aip-1.md, Limits).
      const limit = target === "agent runtime" ? AGENT_LIMITS.maxLineBytes : MiB;
      for (let i = 0; i < SCALE.huge; i++) {
        const big = Buffer.alloc(limit + 100 + i, 0x61);
        big[0] = 0x7b; // "{": NDJSON
        const nd = await ndjsonExchange(
          socket,
          Buffer.concat([big, Buffer.from('\n{"action":"echo","context":{},"constraints":{}}\n')]),
          { timeoutMs: 30_000 },
        );
        expect(nd.map((l) => JSON.parse(l).error?.type ?? JSON.parse(l).status)).toEqual([
          "AIP_ERR_PAYLOAD_TOO_LARGE",
          "success",
        ]);
        // Declared too large: answered from the head alone (a client still writing the body would see the close first).
        const declared = await rawHttp(
          socket,
          Buffer.from(`POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Length: ${big.length}\r\n\r\n{"a":"`),
          30_000,
          1,
        );
        expect(declared.responses[0]?.status, JSON.stringify(declared).slice(0, 300)).toBe(413);
        expect(isEnvelope(declared.responses[0]!.body)).toBe(true);
        const chunked = Buffer.concat([
          Buffer.from(
            `POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nTransfer-Encoding: chunked\r\n\r\n${big.length.toString(16)}\r\n`,
          ),
          big,
          Buffer.from("\r\n0\r\n\r\n"),
        ]);
        const streamed = await rawHttp(socket, chunked, 30_000);
        expect(streamed.responses[0]?.status).toBe(413);
        counted.over_limit += 3;
      }
    });
  }

  it(
    "at the limit (front door): a line of exactly maxLineBytes is served; numbers that grow on re-encoding pass as they came",
    { timeout: 120_000 },
    async () => {
      const shell = JSON.stringify({
        action: "echo",
        context: { source_code: "" },
        constraints: {},
        trace_id: "at-limit",
      });
      const line = shell.replace('"source_code":""', `"source_code":"${"a".repeat(MiB - shell.length)}"`);
      expect(Buffer.byteLength(line) + 1).toBe(MiB + 1);
      const [atLimit] = await ndjsonExchange(agency.socket, line + "\n", { timeoutMs: 30_000 });
      expect(JSON.parse(atLimit!)).toMatchObject({ status: "success", trace_id: "at-limit" });
      const grows = JSON.stringify({ action: "echo", context: { n: [] }, constraints: {} }).replace(
        "[]",
        `[${Array(64_000).fill("1e20").join(",")}]`,
      );
      const answers = await ndjsonExchange(agency.socket, `${grows}\n`.repeat(8), { timeoutMs: 30_000 });
      expect(answers.map((a) => JSON.parse(a).status)).toEqual(Array(8).fill("success"));
      // The agent's circuit did not count them.
      expect((await agency.health()).agents.dummy!.status).toBe("healthy");
      counted.hostile += 9;
    },
  );

  it(
    "slowloris: trickled HTTP heads get 408 and are closed; so do trickled NDJSON lines, with an error line",
    { timeout: 120_000 },
    async () => {
      const trickle = (
        socket: string,
        head: string,
        maxBytes: number,
      ): Promise<{ data: string; closedByServer: boolean }> =>
        new Promise((resolve) => {
          const conn = (async () => {
            const { connect } = await import("node:net");
            return connect(socket);
          })();
          void conn.then((s) => {
            let data = "";
            let sent = 0;
            s.on("data", (c: Buffer) => (data += c.toString("utf8")));
            s.on("error", () => undefined);
            const timer = setInterval(() => {
              // Bounded: gives up after maxBytes bytes even if the server never closes.
              if (sent >= maxBytes) {
                clearInterval(timer);
                s.destroy();
                resolve({ data, closedByServer: false });
                return;
              }
              s.write(sent === 0 ? head : "x");
              sent++;
            }, 100);
            s.on("close", () => {
              clearInterval(timer);
              resolve({ data, closedByServer: sent < maxBytes });
            });
          });
        });
      const maxBytes = Math.ceil((HEADERS_TIMEOUT_MS * 4) / 100);
      const http = Array.from({ length: SCALE.slow }, () =>
        trickle(agency.socket, "POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nX-Slow: ", maxBytes),
      );
      const nd = Array.from({ length: Math.ceil(SCALE.slow / 10) }, () =>
        trickle(agency.socket, '{"action":"echo","context":{"source_code":"', maxBytes),
      );
      const results = await Promise.all(http);
      counted.slowloris += results.length;
      for (const r of results) {
        expect(r.closedByServer).toBe(true);
        expect(r.data).toMatch(/^HTTP\/1\.1 408 /);
        expect(isEnvelope(r.data.slice(r.data.indexOf("\r\n\r\n") + 4))).toBe(true);
      }
      // A trickled NDJSON line meets the same deadline (lineReceiveTimeoutMs = headers_timeout_ms): an error line, then the close.
      const lines = await Promise.all(nd);
      counted.slowloris += nd.length;
      for (const r of lines) {
        expect(r.closedByServer).toBe(true);
        expect(JSON.parse(r.data.trim()).error).toMatchObject({ type: "AIP_ERR_INVALID_JSON" });
      }
      const fresh = await rawExchange(
        agency.socket,
        Buffer.from('{"action":"echo","context":{},"constraints":{}}\n'),
        10_000,
      );
      expect(isEnvelope(fresh.data.toString("utf8").trim())).toBe(true);
    },
  );

  it("nothing crashed, RSS grew < 64 MB, well-behaved clients were all served", { timeout: 60_000 }, async () => {
    const served = await steady.stop();
    const h = await agency.health();
    const after = { orchestrator: rssMiB(pids.orchestrator), agent: rssMiB(pids.agent) };
    const total = Object.values(counted).reduce((a, b) => a + b, 0);
    console.log(
      `fuzz: ${total} inputs ${JSON.stringify(counted)}; RSS MiB before ${JSON.stringify(before)} after ${JSON.stringify(after)}; well-behaved ${served.ok} ok, ${served.failed} failed`,
    );
    expect(agency.process().exitCode).toBe(null);
    expect(h.pid).toBe(pids.orchestrator);
    expect(h.agents.dummy).toMatchObject({ status: "healthy", pid: pids.agent, restarts: 0 });
    expect(pidAlive(pids.agent)).toBe(true);
    expect(after.orchestrator - before.orchestrator).toBeLessThan(64);
    expect(after.agent - before.agent).toBeLessThan(64);
    expect(served.failed, served.failures.join("; ")).toBe(0);
    expect(served.ok).toBeGreaterThan(0);
    if (FULL) {
      expect(total).toBeGreaterThanOrEqual(100_000);
      const dir = join(ROOT, "bench/results");
      mkdirSync(dir, { recursive: true });
      const figures = {
        inputs: total,
        by_kind: counted,
        crashes: 0,
        rss_mib_before: before,
        rss_mib_after: after,
        well_behaved: served,
        seconds: Math.round((Date.now() - startedAt) / 1000),
        seed: SEED,
      };
      writeFileSync(
        join(dir, `${new Date().toISOString().slice(0, 10)}-reliability-fuzz.json`),
        JSON.stringify(figures, null, 2) + "\n",
      );
    }
  });
  it(
    "100,000 tiny lines on one connection and 10 clients that never read: all bounded, log sampled",
    { timeout: 180_000 },
    async () => {
      const { connect } = await import("node:net");
      const { statSync } = await import("node:fs");
      const logBefore = statSync(agency.logFile).size;
      const hogs = await Promise.all(
        Array.from(
          { length: 10 },
          () =>
            new Promise<import("node:net").Socket>((resolve) => {
              const c = connect(agency.socket, () => resolve(c));
              c.on("error", () => undefined);
            }),
        ),
      );
      // Each writes 150,000 requests that fail validation (3 bytes each) and never reads an answer.
      for (const h of hogs) {
        h.pause();
        h.write("{}\n".repeat(150_000));
      }
      const tiny = await ndjsonExchange(agency.socket, "{}\n".repeat(100_000), { timeoutMs: 150_000 });
      expect(tiny).toHaveLength(100_000);
      expect(JSON.parse(tiny[99_999]!).error.type).toBe("AIP_ERR_MISSING_FIELD");
      // The orchestrator answers others meanwhile.
      expect((await agency.health()).agents.dummy!.status).toBe("healthy");
      for (const h of hogs) h.destroy();
      // Bounded in absolute terms (this volume grows the heap, so it runs after the < 64 MB growth check).
      const rss = rssMiB(pids.orchestrator);
      console.log(
        `fuzz volume: orchestrator RSS ${Math.round(rss)} MiB after 100,000 lines and 10 non-reading clients`,
      );
      expect(rss).toBeLessThan(256);
      expect((await agency.health()).pid).toBe(pids.orchestrator);
      const logGrowth = statSync(agency.logFile).size - logBefore;
      // 100,000+ client errors: logged at most 50 a second (~300 bytes a line), not one line each (28+ MB).
      expect(logGrowth).toBeLessThan(8 * MiB);
      counted.hostile += 100_000 + 10;
    },
  );

  it(
    "hostile framing (front door and agent runtime): bad chunk sizes answered 400 at once, short bodies 408, both closed",
    { timeout: 120_000 },
    async () => {
      const badChunks = [
        "zz\r\n{}\r\n0\r\n\r\n",
        "-1\r\n{}\r\n0\r\n\r\n",
        "1000000000000000000\r\n{}\r\n0\r\n\r\n",
        "2\n{}\n0\n\n",
      ];
      await Promise.all(
        Object.values(targets()).map(async (socket) => {
          // The client does not half-close: the answer and the close must come from the server.
          const bad = await Promise.all(
            badChunks.map((b) =>
              rawHttp(socket, Buffer.from(`${HEAD}Transfer-Encoding: chunked\r\n\r\n${b}`), 10_000, 1),
            ),
          );
          bad.forEach((r, i) => {
            expect(
              r.responses.map((x) => x.status),
              JSON.stringify(badChunks[i]),
            ).toEqual([400]);
            expect(isEnvelope(r.responses[0]!.body)).toBe(true);
          });
          counted.hostile += badChunks.length;
        }),
      );
      // Bodies that stop short (sent before the first test, on both targets): answered 408 at
      // requestReceiveTimeoutMs, never held until the idle timeout.
      for (const r of (await cut).flat()) {
        expect(r.closed).toBe(true);
        expect(r.data.toString("latin1")).toMatch(/^HTTP\/1\.1 408 /);
        counted.hostile++;
      }
    },
  );
});
