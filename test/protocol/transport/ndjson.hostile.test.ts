/**
 * NDJSON under hostile load, raw bytes on a real socket: maxPipelined holds however many lines arrive
 * in one read, a client that never reads stops being read, a trickled line meets a deadline.
 */
import { connect, Socket } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { successResponse } from "../../../protocol/contract/envelope.js";
import { httpRequest, ndjsonExchange } from "../../../protocol/transport/client.js";
import { AipServer, type AipServerOptions } from "../../../protocol/transport/server.js";
import { tempDir } from "../../helpers.js";

let dir: string;
let cleanup: () => void;
const servers: AipServer[] = [];
const sockets: Socket[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});

afterEach(async () => {
  for (const c of sockets.splice(0)) c.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close(100)));
  cleanup();
});

async function start(overrides: Partial<AipServerOptions> = {}): Promise<AipServer> {
  const s = await AipServer.listen({
    socketPath: join(dir, "s.sock"),
    invoke: async (req) => successResponse({ echo: req }, "t"),
    ...overrides,
  });
  servers.push(s);
  return s;
}

function open(path: string): Promise<Socket> {
  return new Promise((resolve) => {
    const c = connect(path, () => resolve(c));
    c.on("error", () => undefined);
    sockets.push(c);
  });
}

describe("maxPipelined", () => {
  it("200 lines in one write: never more than maxPipelined handlers at once, all answered in order", async () => {
    let running = 0;
    let peak = 0;
    const waiting: (() => void)[] = [];
    const s = await start({
      limits: { maxPipelined: 8 },
      invoke: async (req) => {
        peak = Math.max(peak, ++running);
        // Each handler waits until the next turn of the event loop has seen every started handler.
        await new Promise<void>((r) => waiting.push(r));
        running--;
        return successResponse({ echo: req }, "t");
      },
    });
    const release = setInterval(() => waiting.splice(0).forEach((r) => r()), 1);
    try {
      const lines = Array.from({ length: 200 }, (_, i) => JSON.stringify({ i })).join("\n") + "\n";
      const answers = await ndjsonExchange(s.socketPath, lines, { timeoutMs: 20_000 });
      expect(answers.map((a) => JSON.parse(a).payload.echo.i)).toEqual(Array.from({ length: 200 }, (_, i) => i));
      expect(peak).toBe(8);
    } finally {
      clearInterval(release);
    }
  });

  it("100,000 tiny lines on one connection: all answered in order while another client is served", async () => {
    const s = await start();
    const flood = Array.from({ length: 100_000 }, (_, i) => `{"i":${i}}\n`).join("");
    const floodDone = ndjsonExchange(s.socketPath, flood, { timeoutMs: 120_000 });
    const other = await httpRequest(s.socketPath, { body: '{"other":1}' });
    expect(JSON.parse(other.body).payload).toEqual({ echo: { other: 1 } });
    const answers = await floodDone;
    expect(answers).toHaveLength(100_000);
    expect(JSON.parse(answers[99_999]!).payload).toEqual({ echo: { i: 99_999 } });
  });
});

describe("answers written together", () => {
  it("the answers of a pipeline that complete in the same tick go out in one write, in order", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const s = await start({
      // Every handler waits for the same moment: their answers are all ready in one tick.
      invoke: async (req) => {
        await gate;
        return successResponse({ echo: req }, "t");
      },
    });
    const writes: string[] = [];
    const write = Socket.prototype.write;
    const spy = vi.spyOn(Socket.prototype, "write").mockImplementation(function (this: Socket, ...args: unknown[]) {
      if (typeof args[0] === "string" && args[0].includes('"status":"success"')) writes.push(args[0]);
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    });
    try {
      const lines = Array.from({ length: 32 }, (_, i) => `{"i":${i}}\n`).join("");
      const exchange = ndjsonExchange(s.socketPath, lines, { timeoutMs: 20_000 });
      while (s.inflight < 32) await new Promise((r) => setImmediate(r));
      release();
      const answers = await exchange;
      expect(answers.map((a) => (JSON.parse(a) as { payload: { echo: { i: number } } }).payload.echo.i)).toEqual(
        Array.from({ length: 32 }, (_, i) => i),
      );
      // One write for all 32 (written one by one, it was 32).
      expect(writes).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
  });
});

describe("a client that never reads", () => {
  it("stops being read once maxQueuedOutputBytes of answers wait for it; other clients are served", async () => {
    let invoked = 0;
    const s = await start({
      limits: { maxQueuedOutputBytes: 64 * 1024 },
      invoke: async () => {
        invoked++;
        return successResponse({ pad: "p".repeat(100) }, "t");
      },
    });
    const hog = await open(s.socketPath);
    hog.pause(); // never reads
    const line = "{}\n".repeat(100_000); // 300 KB a write
    for (let i = 0; i < 30; i++) hog.write(line);
    // Round trips by another client until the hog's count stands still (each probe is itself one invoke).
    let before: number;
    let probes = 0;
    do {
      before = invoked;
      expect((await httpRequest(s.socketPath, { body: "{}" })).status).toBe(200);
      probes++;
    } while (invoked - before > 1 && probes < 200);
    expect(probes).toBeLessThan(200);
    // Answers are ~180 bytes: what fits in 64 KiB plus the kernel's socket buffers, not the 21,845 lines of a whole 64 KiB read (nor 3,000,000).
    expect(invoked).toBeLessThan(3_000);
    expect(hog.writableLength).toBeGreaterThan(0); // its writes back up on its side
  });
});

describe("line receive deadline", () => {
  it("a line trickled a byte at a time gets AIP_ERR_INVALID_JSON after lineReceiveTimeoutMs, and the connection closes", async () => {
    const s = await start({ limits: { lineReceiveTimeoutMs: 300, idleTimeoutMs: 120_000 } });
    const c = await open(s.socketPath);
    let out = "";
    c.on("data", (d: Buffer) => (out += d.toString()));
    c.write('{"first":1}\n{"action":"echo","context":{"source_code":"');
    let sent = 0;
    const trickle = setInterval(() => c.writable && (c.write("x"), sent++), 20);
    await new Promise((r) => c.once("close", r));
    clearInterval(trickle);
    const answers = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { payload?: unknown; error?: { type: string; detail: string } });
    expect(answers).toHaveLength(2);
    expect(answers[0]!.payload).toEqual({ echo: { first: 1 } });
    expect(answers[1]!.error).toMatchObject({
      type: "AIP_ERR_INVALID_JSON",
      detail: "NDJSON line did not arrive within 300 ms of its first byte",
    });
    expect(sent).toBeLessThan(100); // 2 s of trickle would have kept it open on the idle timeout alone
  });

  it("a line that arrives whole, in pieces, within the deadline is answered", async () => {
    const s = await start({ limits: { lineReceiveTimeoutMs: 5_000 } });
    const c = await open(s.socketPath);
    const got = new Promise<string>((resolve) => c.once("data", (d: Buffer) => resolve(d.toString())));
    c.write('{"a":');
    await new Promise((r) => setImmediate(r));
    c.write("1}\n");
    expect(JSON.parse(await got).payload).toEqual({ echo: { a: 1 } });
  });
});
