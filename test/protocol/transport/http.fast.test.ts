/**
 * The HTTP fast path (protocol/transport/http-fast.ts): the common invoke is read without node:http and answered
 * as node:http answers it; everything else hands the connection to node:http with its bytes intact.
 */
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { Pool } from "undici";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { successResponse } from "../../../protocol/contract/envelope.js";
import { FAST_HEAD_MAX_BYTES, parseSimpleInvoke } from "../../../protocol/transport/http-fast.js";
import { REFUSALS_PER_S } from "../../../protocol/transport/http.js";
import { parseResponses, rawExchange } from "../../reliability/lib/raw.js";
import { serverFixture } from "../lib/servers.js";
import { tempDir } from "../../helpers.js";

const HEAD = "POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Type: application/json\r\n";
const BODY = '{"action":"echo","context":{},"constraints":{}}';
const request = (extra = "", body = BODY): string =>
  `${HEAD}${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe("parseSimpleInvoke: only the common request, whole", () => {
  const parse = (text: string, max = 1024 * 1024) => parseSimpleInvoke(Buffer.from(text, "latin1"), max);

  it("reads the common request: where the body is, keep-alive or close", () => {
    const text = request();
    expect(parse(text)).toEqual({ bodyStart: text.length - BODY.length, bodyEnd: text.length, close: false });
    expect(parse(request("Connection: close\r\n"))?.close).toBe(true);
    expect(parse(request("connection:  Keep-Alive \r\n"))?.close).toBe(false);
    expect(parse(request("X-Anything: any value, at all\t\r\n"))).toBeDefined();
    expect(parse(request("", ""))).toEqual({
      bodyStart: request("", "").length,
      bodyEnd: request("", "").length,
      close: false,
    });
  });

  for (const [name, text] of [
    ["another route", request().replace("/v1/invoke", "/v1/invoke?x=1")],
    ["another method", request().replace("POST", "PUT")],
    ["HTTP/1.0", request().replace("HTTP/1.1", "HTTP/1.0")],
    ["a blank line before the request line", `\r\n${request()}`],
    ["chunked", `${HEAD}Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
    ["chunked beside a Content-Length", request("Transfer-Encoding: chunked\r\n")],
    ["Expect: 100-continue", request("Expect: 100-continue\r\n")],
    ["Upgrade", request("Upgrade: websocket\r\n")],
    ["Connection: upgrade", request("Connection: upgrade\r\n")],
    ["no Content-Length", `${HEAD}\r\n`],
    ["two Content-Lengths", request(`Content-Length: ${BODY.length}\r\n`)],
    ["a signed Content-Length", request().replace(`Content-Length: ${BODY.length}`, `Content-Length: +${BODY.length}`)],
    [
      "a Content-Length with a space inside",
      request().replace(`Content-Length: ${BODY.length}`, "Content-Length: 4 7"),
    ],
    ["a Content-Length of 16 digits", `${HEAD}Content-Length: 0000000000000047\r\n\r\n${BODY}`],
    ["a body shorter than its Content-Length", request().slice(0, -1)],
    ["a second request after the first (pipelining)", request() + request()],
    ["one byte after the body", `${request()}x`],
    ["a head not yet whole", HEAD],
    ["a folded header line", request("X-A: a\r\n b\r\n")],
    ["a space before the colon", request("X-A : a\r\n")],
    ["a header without a colon", request("X-A\r\n")],
    ["an empty header name", request(": a\r\n")],
    ["a bare LF line end", request("X-A: a\n")],
    ["a bare CR in a value", request("X-A: a\rb\r\n")],
    ["a NUL in a value", request("X-A: a\u0000b\r\n")],
    ["a byte over 0x7e in a value", request("X-A: caf\u00e9\r\n")],
    ["a head over the fast path's limit", request(`X-Pad: ${"p".repeat(FAST_HEAD_MAX_BYTES)}\r\n`)],
  ] as const) {
    it(`leaves ${name} to node:http`, () => {
      expect(parse(text)).toBeUndefined();
    });
  }

  it("refuses a chunked invoke whose body starts with a byte no chunk size starts with, as node:http does", () => {
    const chunked = `${HEAD}Transfer-Encoding: chunked\r\n\r\n`;
    for (const body of ["zz\r\n{}\r\n0\r\n\r\n", "-1\r\n", " 2\r\n", ";x\r\n", "\r\n"])
      expect(parse(chunked + body)?.refuse?.code).toBe("HPE_INVALID_CHUNK_SIZE");
    expect(parse(`${HEAD}transfer-encoding:  CHUNKED \r\n\r\nzz\r\n`)?.refuse?.code).toBe("HPE_INVALID_CHUNK_SIZE");
    // A chunk size that may be good, a body not here yet, other codings, Content-Length beside: node:http's.
    for (const text of [
      `${chunked}2\r\n{}\r\n0\r\n\r\n`,
      `${chunked}F\r\n`,
      `${chunked}1000000000000000000\r\n`,
      chunked,
      `${HEAD}Transfer-Encoding: gzip, chunked\r\n\r\nzz\r\n`,
      `${HEAD}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
      `${HEAD}Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\nzz\r\n`,
      `${HEAD}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
      `${HEAD}Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\nzz\r\n`,
    ])
      expect(parse(text)).toBeUndefined();
  });

  it("refuses only what node:http fails as HPE_INVALID_CHUNK_SIZE: every first byte of a chunked body", async () => {
    const { createServer } = await import("node:http");
    const { dir, cleanup } = tempDir();
    const failed = new Map<number, string | undefined>();
    let byte = -1;
    const server = createServer({ requireHostHeader: false }, (req, res) => {
      req.resume();
      req.once("end", () => res.end());
    });
    server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
      failed.set(byte, err.code);
      socket.destroy();
    });
    await new Promise<void>((r) => server.listen(join(dir, "h.sock"), r));
    try {
      for (byte = 0; byte < 256; byte++) {
        const text = Buffer.concat([
          Buffer.from(`${HEAD}Transfer-Encoding: chunked\r\n\r\n`),
          Buffer.from([byte]),
          Buffer.from("\r\n"),
        ]);
        const refused = parseSimpleInvoke(text, 1024 * 1024)?.refuse;
        // A hex digit starts a chunk size: node:http then waits for the chunk, and so is not asked.
        if (/[0-9a-f]/i.test(String.fromCharCode(byte))) {
          expect(refused).toBeUndefined();
          continue;
        }
        await rawExchange(join(dir, "h.sock"), text, 10_000, { end: false });
        expect([byte, failed.get(byte)]).toEqual([byte, refused?.code]);
      }
      // Every byte but the 22 hex digits is refused, and node:http fails each of them the same way.
      expect([...failed.values()].filter((code) => code === "HPE_INVALID_CHUNK_SIZE")).toHaveLength(256 - 22);
    } finally {
      server.close();
      cleanup();
    }
  });

  it("leaves a body over the limit to node:http (its 413 and linger)", () => {
    expect(parse(request(), BODY.length - 1)).toBeUndefined();
    expect(parse(request(), BODY.length)).toBeDefined();
  });
});

let signals: AbortSignal[] = [];

beforeEach(() => {
  signals = [];
});

const { start } = serverFixture(() => ({
  invoke: async (req, ctx) => {
    signals.push(ctx.signal);
    return successResponse({ echo: req }, "t");
  },
  routes: { "GET /ping": async () => ({ status: 200, body: '{"pong":true}' }) },
}));

/** The head's fields, lower-cased names, without Date (its value is the clock's). */
function headFields(raw: Buffer): { status: string; fields: Record<string, string> } {
  const head = raw.subarray(0, raw.indexOf("\r\n\r\n")).toString("latin1").split("\r\n");
  const fields: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(":");
    fields[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  expect(fields.date).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  delete fields.date;
  return { status: head[0]!, fields };
}

const connected = (path: string): Promise<Socket> =>
  new Promise((resolve) => {
    const c = connect(path, () => resolve(c));
    c.on("error", () => undefined);
  });

describe("the fast path on a server", () => {
  it("serves a keep-alive client's requests without node:http", async () => {
    const s = await start();
    const pool = new Pool("http://aip", { socketPath: s.socketPath, connections: 4 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const body = JSON.stringify({ action: "echo", context: { i }, constraints: {} });
          const res = await pool.request({
            path: "/v1/invoke",
            method: "POST",
            body,
            headers: { "content-type": "application/json" },
          });
          return {
            status: res.statusCode,
            json: (await res.body.json()) as { payload: { echo: { context: { i: number } } } },
          };
        }),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
      expect(answers.map((a) => a.json.payload.echo.context.i)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      expect(s.httpHandedOver).toBe(0);
    } finally {
      await pool.destroy();
    }
  });

  it("answers with the head node:http writes, success and error alike", async () => {
    const s = await start();
    for (const body of [BODY, "{not json"]) {
      // The same request, once plain (fast) and once chunked (node:http).
      const fast = await rawExchange(s.socketPath, Buffer.from(request("", body)), 5000, {
        end: false,
        done: (d) => parseResponses(d).length === 1,
      });
      const hex = Buffer.byteLength(body).toString(16);
      const slow = await rawExchange(
        s.socketPath,
        Buffer.from(`${HEAD}Transfer-Encoding: chunked\r\n\r\n${hex}\r\n${body}\r\n0\r\n\r\n`),
        5000,
        { end: false, done: (d) => parseResponses(d).length === 1 },
      );
      const f = headFields(fast.data);
      const n = headFields(slow.data);
      expect(f).toEqual(n);
      // The same body, but for a generated trace id (each request gets its own).
      const generic = (text: string): string => text.replace(/[0-9a-f]{32}/g, "<trace>");
      expect(generic(parseResponses(fast.data)[0]!.body)).toBe(generic(parseResponses(slow.data)[0]!.body));
    }
    expect(s.httpHandedOver).toBe(2);
    expect(
      headFields(
        (
          await rawExchange(s.socketPath, Buffer.from(request()), 5000, {
            end: false,
            done: (d) => parseResponses(d).length === 1,
          })
        ).data,
      ),
    ).toMatchObject({
      status: "HTTP/1.1 200 OK",
      fields: { connection: "keep-alive", "keep-alive": "timeout=60", "content-type": "application/json" },
    });
  });

  it("Connection: close is answered with Connection: close, then the connection ends", async () => {
    const s = await start();
    const r = await rawExchange(s.socketPath, Buffer.from(request("Connection: close\r\n")), 5000, { end: false });
    expect(r.closed).toBe(true);
    expect(parseResponses(r.data).map((x) => x.status)).toEqual([200]);
    expect(headFields(r.data).fields.connection).toBe("close");
    expect(s.httpHandedOver).toBe(0);
  });

  it("answers pipelined requests in order, whether they come together or while one is answered", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let entered: () => void = () => undefined;
    const answering = new Promise<void>((r) => (entered = r));
    const s = await start({
      invoke: async (req) => {
        const i = (req as { context: { i: number } }).context.i;
        if (i === 0) {
          entered();
          await held;
        }
        return successResponse({ i }, "t");
      },
    });
    const body = (i: number): string => JSON.stringify({ action: "echo", context: { i }, constraints: {} });
    const c = await connected(s.socketPath);
    let data = Buffer.alloc(0);
    c.on("data", (d: Buffer) => (data = Buffer.concat([data, d])));
    c.write(request("", body(0)));
    // Requests 1 and 2 arrive (are in the server's socket) while 0 is being answered; 3 and 4 together, after.
    await answering;
    c.write(request("", body(1)));
    await new Promise((r) => c.write(request("", body(2)), r));
    release();
    await vi.waitFor(() => expect(parseResponses(data).length).toBeGreaterThanOrEqual(3), {
      timeout: 10_000,
      interval: 10,
    });
    c.write(request("", body(3)) + request("", body(4)));
    await vi.waitFor(() => expect(parseResponses(data).length).toBeGreaterThanOrEqual(5), {
      timeout: 10_000,
      interval: 10,
    });
    c.destroy();
    expect(parseResponses(data).map((r) => (JSON.parse(r.body) as { payload: { i: number } }).payload.i)).toEqual([
      0, 1, 2, 3, 4,
    ]);
    // 1 and 2 were read together (one buffer: node:http's), or one by one (the fast path): in order either way.
    expect(s.httpHandedOver).toBeLessThanOrEqual(1);
  });

  it("another route hands the connection over: it and the invokes after it are answered", async () => {
    const s = await start();
    const ping = "GET /ping HTTP/1.1\r\nHost: aip\r\n\r\n";
    const r = await rawExchange(s.socketPath, Buffer.from(ping + request() + request()), 5000, {
      end: false,
      done: (d) => parseResponses(d).length === 3,
    });
    const out = parseResponses(r.data);
    expect(out.map((x) => x.status)).toEqual([200, 200, 200]);
    expect(JSON.parse(out[0]!.body)).toEqual({ pong: true });
    expect(JSON.parse(out[2]!.body).status).toBe("success");
    expect(s.httpHandedOver).toBe(1);
  });

  it("a head or body that comes in pieces is read by node:http", async () => {
    const s = await start();
    const c = await connected(s.socketPath);
    let data = Buffer.alloc(0);
    c.on("data", (d: Buffer) => (data = Buffer.concat([data, d])));
    const text = request();
    c.write(text.slice(0, 30));
    await new Promise((r) => setTimeout(r, 30));
    c.write(text.slice(30));
    await vi.waitFor(() => expect(parseResponses(data).length).toBeGreaterThanOrEqual(1), {
      timeout: 10_000,
      interval: 10,
    });
    c.destroy();
    expect(JSON.parse(parseResponses(data)[0]!.body).status).toBe("success");
    expect(s.httpHandedOver).toBe(1);
  });

  it("a client that half-closes while its request is answered ends the connection, and the request is cancelled", async () => {
    let entered: () => void = () => undefined;
    const inside = new Promise<void>((r) => (entered = r));
    const s = await start({
      invoke: async (_req, ctx) => {
        signals.push(ctx.signal);
        entered();
        await new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r(), { once: true }));
        return successResponse({}, "t");
      },
    });
    const c = await connected(s.socketPath);
    let data = "";
    c.on("data", (d: Buffer) => (data += d.toString()));
    const closed = new Promise<void>((r) => c.once("close", () => r()));
    c.write(request());
    await inside;
    c.end();
    await closed;
    expect(signals[0]!.aborted).toBe(true);
    expect(data).toBe("");
  });

  it("a request answered after longer than the idle timeout is answered; the idle connection is closed after it", async () => {
    const s = await start({
      limits: { idleTimeoutMs: 150 },
      invoke: async () => {
        await new Promise((r) => setTimeout(r, 400));
        return successResponse({ slow: true }, "t");
      },
    });
    const c = await connected(s.socketPath);
    let data = Buffer.alloc(0);
    c.on("data", (d: Buffer) => (data = Buffer.concat([data, d])));
    const closed = new Promise<number>((r) => c.once("close", () => r(Date.now())));
    const sent = Date.now();
    c.write(request());
    const closedAt = await closed;
    expect(JSON.parse(parseResponses(data)[0]!.body).payload).toEqual({ slow: true });
    expect(closedAt - sent).toBeGreaterThanOrEqual(400 + 100);
    expect(s.httpHandedOver).toBe(0);
  });

  it("a client that does not read its answers is not read either: one answer's worth of memory, then all answered once it reads", async () => {
    let invoked = 0;
    const big = "x".repeat(512 * 1024);
    const s = await start({
      invoke: async () => {
        invoked++;
        return successResponse({ big }, "t");
      },
    });
    const c = await connected(s.socketPath);
    c.pause();
    // One request at a time, each after the server had time to answer the one before.
    for (let i = 0; i < 10; i++) {
      c.write(request());
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(invoked).toBeLessThanOrEqual(3);
    const chunks: Buffer[] = [];
    let bytes = 0;
    c.on("data", (d: Buffer) => {
      chunks.push(d);
      bytes += d.length;
    });
    c.resume();
    await vi.waitFor(() => expect(bytes).toBeGreaterThanOrEqual(10 * big.length), { timeout: 10_000, interval: 10 });
    await vi.waitFor(() => expect(parseResponses(Buffer.concat(chunks))).toHaveLength(10), {
      timeout: 10_000,
      interval: 10,
    });
    c.destroy();
    expect(parseResponses(Buffer.concat(chunks)).map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(invoked).toBe(10);
  });

  it("a bad chunk size is answered 400 and closed without node:http; the next connection is served", async () => {
    const events: string[] = [];
    const s = await start({ onEvent: (e) => events.push(`${e.event} ${"code" in e ? e.code : ""}`) });
    const bad = Buffer.from(`${HEAD}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`);
    const r = await rawExchange(s.socketPath, bad, 5000, { end: false });
    const out = parseResponses(r.data);
    expect(out.map((x) => x.status)).toEqual([400]);
    expect(headFields(r.data)).toEqual({
      status: "HTTP/1.1 400 Bad Request",
      fields: {
        "content-type": "application/problem+json",
        "content-length": String(Buffer.byteLength(out[0]!.body)),
        connection: "close",
      },
    });
    expect(JSON.parse(out[0]!.body).error).toMatchObject({
      type: "AIP_ERR_INVALID_JSON",
      detail: "Malformed HTTP request (HPE_INVALID_CHUNK_SIZE)",
    });
    expect(r.closed).toBe(true);
    expect(s.httpHandedOver).toBe(0);
    expect(signals).toHaveLength(0);
    expect(events).toEqual(["client_error HPE_INVALID_CHUNK_SIZE"]);
    const ok = await rawExchange(s.socketPath, Buffer.from(request("Connection: close\r\n")), 5000);
    expect(parseResponses(ok.data).map((x) => x.status)).toEqual([200]);
  });

  it("malformed requests past REFUSALS_PER_S in a second are answered in turn; a good request meanwhile is not held", async () => {
    const s = await start();
    const bad = Buffer.from(`${HEAD}Transfer-Encoding: chunked\r\n\r\nzz\r\n`);
    const n = REFUSALS_PER_S + 30;
    const t0 = performance.now();
    const refused = Array.from({ length: n }, () =>
      rawExchange(s.socketPath, bad, 10_000, { end: false }).then((r) => ({ ...r, at: performance.now() - t0 })),
    );
    // Sent once the refusals have started waiting: the 30 past the budget take 30 turns of 20 ms.
    await new Promise((r) => setTimeout(r, 100));
    const good = await rawExchange(s.socketPath, Buffer.from(request("Connection: close\r\n")), 10_000).then((r) => ({
      ...r,
      at: performance.now() - t0,
    }));
    const out = await Promise.all(refused);
    expect(out.map((r) => parseResponses(r.data).map((x) => x.status))).toEqual(Array(n).fill([400]));
    expect(out.every((r) => r.closed)).toBe(true);
    expect(parseResponses(good.data).map((x) => x.status)).toEqual([200]);
    const last = Math.max(...out.map((r) => r.at));
    expect(last).toBeGreaterThanOrEqual(((n - REFUSALS_PER_S - 1) * 1000) / REFUSALS_PER_S);
    expect(good.at).toBeLessThan(last);
    expect(s.httpHandedOver).toBe(0);
  });

  it("a request read by node:http whose client goes away is cancelled", async () => {
    let entered: () => void = () => undefined;
    const inside = new Promise<void>((r) => (entered = r));
    const s = await start({
      invoke: async (_req, ctx) => {
        signals.push(ctx.signal);
        entered();
        await new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r(), { once: true }));
        return successResponse({}, "t");
      },
    });
    const c = await connected(s.socketPath);
    const closed = new Promise<void>((r) => c.once("close", () => r()));
    c.write(`${HEAD}Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`);
    await inside;
    expect(s.httpHandedOver).toBe(1);
    c.destroy();
    await closed;
    await vi.waitFor(() => expect(signals[0]!.aborted).toBe(true), { timeout: 10_000, interval: 10 });
    expect(signals[0]!.reason).toMatchObject({ code: "AIP_ERR_CANCELLED" });
  });

  it("a request over the body limit still gets node:http's 413", async () => {
    const s = await start({ limits: { maxBodyBytes: 10 } });
    const r = await rawExchange(s.socketPath, Buffer.from(request()), 5000, { end: false });
    const out = parseResponses(r.data);
    expect(out.map((x) => x.status)).toEqual([413]);
    expect(JSON.parse(out[0]!.body).error.type).toBe("AIP_ERR_PAYLOAD_TOO_LARGE");
    expect(r.closed).toBe(true);
  });
});
