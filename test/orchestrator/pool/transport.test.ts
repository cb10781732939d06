import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AipError } from "../../../protocol/contract/errors.js";
import { AipServer } from "../../../protocol/transport/server.js";
import { Cancellation } from "../../../protocol/transport/cancel.js";
import {
  BrokenAnswer,
  freshConnectionTransport,
  httpTransport,
  ndjsonTransport,
  neverReachedAgent,
  type Transport,
} from "../../../orchestrator/pool/transport.js";
import { createLogger } from "../../../protocol/util/log.js";
import { AgentInvoker } from "../../../agents/lib/runtime/invoke.js";
import { tempDir } from "../../helpers.js";

let tmp: { dir: string; cleanup: () => void };
let transport: Transport | undefined;
const servers: { close(): unknown }[] = [];

beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  await transport?.close();
  transport = undefined;
  for (const s of servers.splice(0)) await s.close();
  tmp.cleanup();
});

const request = (traceId: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ action: "echo", context: {}, constraints: {}, trace_id: traceId, ...extra });

/** A real AIP-1 server (the one every agent runs) whose answers echo the trace id and the connection. */
async function agent(
  onInvoke?: (value: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>,
): Promise<{ socket: string; server: AipServer }> {
  const socket = join(tmp.dir, `agent-${servers.length}.sock`);
  const server = await AipServer.listen({
    socketPath: socket,
    invoke: async (value, ctx) => {
      const v = value as Record<string, unknown>;
      const payload = onInvoke ? await onInvoke(v, ctx.signal) : { connection: ctx.connection, framing: ctx.framing };
      return { status: "success", payload, trace_id: v.trace_id as string, agent: "t", version: "1" };
    },
  });
  servers.push(server);
  return { socket, server };
}

/** A raw socket server that does whatever `onRequest` says with each HTTP request (its body and the request's count on that connection). */
async function rawAgent(
  onRequest: (socket: Socket, body: string) => void,
): Promise<{ socket: string; conns: Socket[] }> {
  const path = join(tmp.dir, `raw-${servers.length}.sock`);
  const conns: Socket[] = [];
  const server: Server = createServer((s) => {
    conns.push(s);
    let rest = "";
    s.setEncoding("latin1");
    s.on("data", (c: string) => {
      rest += c;
      for (;;) {
        const end = rest.indexOf("\r\n\r\n");
        if (end === -1) return;
        const length = Number(/content-length: (\d+)/i.exec(rest.slice(0, end))?.[1] ?? 0);
        if (rest.length < end + 4 + length) return;
        const body = rest.slice(end + 4, end + 4 + length);
        rest = rest.slice(end + 4 + length);
        onRequest(s, body);
      }
    });
    s.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  servers.push({
    close: () => {
      for (const c of conns) c.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return { socket: path, conns };
}

/** An answer envelope for the request `body`. */
const envelope = (body: string, payload: unknown = null): string =>
  JSON.stringify({ status: "success", payload, trace_id: (JSON.parse(body) as { trace_id: string }).trace_id });

/** An HTTP/1.1 answer with a Content-Length. */
const answer = (text: string, headers = ""): string =>
  `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n${headers}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;

const signal = (): Cancellation => new Cancellation();

/** An HTTP transport's answer: the body as the agent wrote it. */
const sendText = async (t: Transport, body: string, cancel: Cancellation): Promise<string> =>
  (await t.send(body, cancel)) as string;

describe("httpTransport: HTTP/1.1 keep-alive to the agent, one call per connection", () => {
  it("speaks HTTP/1.1 to a real AIP-1 server and reuses one connection for calls in turn", async () => {
    const { socket } = await agent();
    transport = httpTransport(socket, 4);
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(JSON.parse(await sendText(transport, request(`t-${i}`), signal())));
    expect(answers.map((a) => a.trace_id)).toEqual(["t-0", "t-1", "t-2", "t-3", "t-4"]);
    expect(answers.every((a) => a.payload.framing === "http")).toBe(true);
    // One connection, kept open between calls.
    expect(new Set(answers.map((a) => a.payload.connection)).size).toBe(1);
  });

  it("one call per connection: concurrent calls open their own, then they are reused", async () => {
    const { socket } = await agent();
    transport = httpTransport(socket, 4);
    const batch = async (): Promise<number[]> =>
      (await Promise.all([0, 1, 2].map((i) => sendText(transport!, request(`c-${i}`), signal())))).map(
        (a) => (JSON.parse(a) as { payload: { connection: number } }).payload.connection,
      );
    const first = await batch();
    expect(new Set(first).size).toBe(3);
    const second = await batch();
    expect([...second].sort()).toEqual([...first].sort());
  });

  it("an answer arriving in pieces, and a large one, are read whole", async () => {
    const big = "x".repeat(3 * 1024 * 1024);
    const { socket } = await rawAgent((s, body) => {
      const text = answer(envelope(body, { big }));
      // Written in three pieces a turn apart, the first inside the head.
      s.write(text.slice(0, 10));
      setImmediate(() => {
        s.write(text.slice(10, 2000));
        setImmediate(() => s.write(text.slice(2000)));
      });
    });
    transport = httpTransport(socket, 2);
    const first = JSON.parse(await sendText(transport, request("big-1"), signal())) as { payload: { big: string } };
    expect(first.payload.big.length).toBe(big.length);
    const again = JSON.parse(await sendText(transport, request("big-2"), signal())) as { trace_id: string };
    expect(again.trace_id).toBe("big-2");
  });

  it("a chunked answer (with an extension and a trailer) and an interim 100 Continue are read", async () => {
    const { socket, conns } = await rawAgent((s, body) => {
      const text = envelope(body, { n: 1 });
      const chunks = [text.slice(0, 5), text.slice(5)];
      s.write("HTTP/1.1 100 Continue\r\n\r\n");
      s.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
      s.write(`${chunks[0]!.length.toString(16)};ext=1\r\n${chunks[0]}\r\n`);
      setImmediate(() => s.write(`${chunks[1]!.length.toString(16)}\r\n${chunks[1]}\r\n0\r\nX-Trailer: 1\r\n\r\n`));
    });
    transport = httpTransport(socket, 2);
    for (const id of ["ch-1", "ch-2"])
      expect(JSON.parse(await sendText(transport, request(id), signal()))).toMatchObject({
        trace_id: id,
        payload: { n: 1 },
      });
    expect(conns.length).toBe(1);
  });

  it("framing headers are matched by name in any case; names that only look like them are not read", async () => {
    let n = 0;
    const { socket, conns } = await rawAgent((s, body) => {
      const text = envelope(body);
      const length = Buffer.byteLength(text);
      if (n++ === 0)
        // Near misses of the same length come after the real ones: read as framing, they would break the answer.
        s.write(
          `HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh: ${length}\r\nCONNECTION: Keep-Alive\r\n` +
            `Content-Lengtx: 1\r\nContent\rLength: 2\r\nTransfer-Encodinh: chunked\r\nConnectio\r: close\r\n\r\n${text}`,
        );
      else
        s.write(`HTTP/1.1 200 OK\r\nTRANSFER-ENCODING: chunked\r\n\r\n${length.toString(16)}\r\n${text}\r\n0\r\n\r\n`);
    });
    transport = httpTransport(socket, 2);
    expect(JSON.parse(await sendText(transport, request("hn-1"), signal())).trace_id).toBe("hn-1");
    expect(JSON.parse(await sendText(transport, request("hn-2"), signal())).trace_id).toBe("hn-2");
    // Both answers kept the connection: no near miss was taken for Connection: close.
    expect(conns.length).toBe(1);
  });

  it("an answer with Connection: close, or HTTP/1.0 without a length, ends its connection; the next call opens one", async () => {
    let n = 0;
    const { socket, conns } = await rawAgent((s, body) => {
      if (n++ === 0) s.write(answer(envelope(body), "Connection: close\r\n"));
      else s.end(`HTTP/1.0 200 OK\r\n\r\n${envelope(body)}`);
    });
    transport = httpTransport(socket, 2);
    expect(JSON.parse(await sendText(transport, request("cl-1"), signal())).trace_id).toBe("cl-1");
    expect(JSON.parse(await sendText(transport, request("cl-2"), signal())).trace_id).toBe("cl-2");
    expect(conns.length).toBe(2);
  });

  it("a cancelled call rejects with the signal's reason and closes its connection: the agent sees the cancellation", async () => {
    let agentSaw: unknown;
    let started = false;
    const { socket } = await agent(
      (_, agentSignal) =>
        new Promise((resolve) => {
          started = true;
          agentSignal.addEventListener("abort", () => {
            agentSaw = agentSignal.reason;
            resolve(null);
          });
        }),
    );
    transport = httpTransport(socket, 2);
    const controller = new Cancellation();
    const call = transport.send(request("slow-1"), controller);
    // Cancelled once the agent runs the call: before, there would be nothing for it to see.
    await vi.waitFor(() => expect(started).toBe(true), { timeout: 20_000 });
    controller.abort(new AipError("AIP_ERR_TIMEOUT", "deadline"));
    await expect(call).rejects.toMatchObject({ code: "AIP_ERR_TIMEOUT" });
    await vi.waitFor(() => expect(agentSaw).toMatchObject({ code: "AIP_ERR_CANCELLED" }), { timeout: 20_000 });
  });

  it("no socket: the error says the request never reached the agent (so it may be retried)", async () => {
    transport = httpTransport(join(tmp.dir, "absent.sock"), 2);
    const err = await transport.send(request("gone-1"), signal()).catch((e: unknown) => e);
    expect((err as NodeJS.ErrnoException).code).toBe("ENOENT");
    expect(neverReachedAgent(err)).toBe(true);
  });

  it("the agent closing the connection before answering is not a never-reached error (no retry)", async () => {
    const { socket } = await rawAgent((s) => s.destroy());
    transport = httpTransport(socket, 2);
    const err = await transport.send(request("crash-1"), signal()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain("connection closed before the answer");
    expect(neverReachedAgent(err)).toBe(false);
  });

  it("an idle connection the agent closed is dropped: the next call opens a new one", async () => {
    const { socket, conns } = await rawAgent((s, body) => s.write(answer(envelope(body))));
    transport = httpTransport(socket, 2);
    expect(JSON.parse(await sendText(transport, request("idle-1"), signal())).trace_id).toBe("idle-1");
    // The agent ends the connection; it is closed once the transport's side has ended it too.
    const closed = new Promise((r) => conns[0]!.once("close", r));
    conns[0]!.end();
    await closed;
    // The transport drops the connection on its own close event, a turn of the event loop or two later.
    for (let turn = 0; turn < 3; turn++) await new Promise((r) => setImmediate(r));
    expect(JSON.parse(await sendText(transport, request("idle-2"), signal())).trace_id).toBe("idle-2");
    expect(conns.length).toBe(2);
  });

  it("bytes after the answer, or not HTTP at all: the call fails (EPROTO) and the connection is closed", async () => {
    const { socket, conns } = await rawAgent((s, body) => {
      const id = (JSON.parse(body) as { trace_id: string }).trace_id;
      s.write(id === "two-1" ? answer(envelope(body)) + answer(envelope(body)) : `${envelope(body)}\n`);
    });
    transport = httpTransport(socket, 2);
    // Two answers in one read for one request.
    await expect(transport.send(request("two-1"), signal())).resolves.toContain("two-1");
    await expect(transport.send(request("nd-1"), signal())).rejects.toMatchObject({ code: "EPROTO" });
    await vi.waitFor(() => expect(conns.every((c) => c.destroyed || c.readableEnded)).toBe(true), { timeout: 20_000 });
  });
});

describe("freshConnectionTransport (benchmark comparison)", () => {
  it("a new connection for every call", async () => {
    const { socket } = await agent();
    transport = freshConnectionTransport(socket, 4);
    const conns = [];
    for (let i = 0; i < 3; i++)
      conns.push(
        (JSON.parse(await sendText(transport, request(`f-${i}`), signal())) as { payload: { connection: number } })
          .payload.connection,
      );
    expect(new Set(conns).size).toBe(3);
  });
});

/** A call's cancellation as forwarding makes it: it carries the request's trace id. */
const traced = (traceId: string): Cancellation => {
  const c = new Cancellation();
  c.traceId = traceId;
  return c;
};

/**
 * A raw socket server reading NDJSON: records each read, and answers each request line with `onLine`;
 * `onConnection` sees each connection (and its index) before anything is read from it.
 */
async function rawNdjsonAgent(
  onLine: (socket: Socket, line: string) => void,
  onConnection?: (socket: Socket, index: number) => void,
): Promise<{ socket: string; reads: string[]; conns: Socket[] }> {
  const path = join(tmp.dir, `rawnd-${servers.length}.sock`);
  const reads: string[] = [];
  const conns: Socket[] = [];
  const server: Server = createServer((s) => {
    onConnection?.(s, conns.length);
    conns.push(s);
    let rest = "";
    s.setEncoding("utf8");
    s.on("data", (c: string) => {
      reads.push(c);
      rest += c;
      let nl: number;
      while ((nl = rest.indexOf("\n")) !== -1) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        if (!line.startsWith('{"control"')) onLine(s, line);
      }
    });
    s.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  servers.push({
    close: () => {
      for (const c of conns) c.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return { socket: path, reads, conns };
}

describe("ndjsonTransport: several calls in flight on one NDJSON connection, answers matched by trace id", () => {
  it("answers come back as they are ready, each to its own call, on one connection", async () => {
    // Each call is answered when the test releases it: b, then c, then a, the first sent.
    const release = new Map<string, () => void>();
    const { socket, server } = await agent(async (v) => {
      const id = v.trace_id as string;
      await new Promise<void>((r) => release.set(id, r));
      return { id };
    });
    transport = ndjsonTransport(socket, 4);
    const order: string[] = [];
    const calls = ["a", "b", "c"].map((id) =>
      transport!.send(request(id), traced(id)).then((a) => {
        order.push(id);
        return a as { trace_id: string; payload: { id: string } };
      }),
    );
    await vi.waitFor(() => expect([...release.keys()].sort()).toEqual(["a", "b", "c"]), { timeout: 20_000 });
    for (const [id, call] of [
      ["b", calls[1]!],
      ["c", calls[2]!],
      ["a", calls[0]!],
    ] as const) {
      release.get(id)!();
      // Answered while the calls sent before it are still held.
      await call;
    }
    const answers = await Promise.all(calls);
    expect(answers.map((a) => [a.trace_id, a.payload.id])).toEqual([
      ["a", "a"],
      ["b", "b"],
      ["c", "c"],
    ]);
    expect(order).toEqual(["b", "c", "a"]);
    expect(server.connections).toBe(1);
  });

  it("a call alone on its connection is written at once; the calls of one event-loop turn beside it, together", async () => {
    // "hold" is answered only after the others: it stays in flight on the connection meanwhile.
    let answerHeld = (): void => undefined;
    const { socket, reads } = await rawNdjsonAgent((s, line) => {
      const text = `${envelope(line)}\n`;
      if ((JSON.parse(line) as { trace_id: string }).trace_id === "hold") answerHeld = () => s.write(text);
      else s.write(text);
    });
    transport = ndjsonTransport(socket, 4);
    const held = transport.send(request("hold"), traced("hold"));
    await vi.waitFor(() => expect(reads.length).toBeGreaterThan(0), { timeout: 20_000 });
    expect(reads[0]!.trim().split("\n")).toEqual(['{"control":"unordered"}', request("hold")]);
    await Promise.all(["w-1", "w-2", "w-3"].map((id) => transport!.send(request(id), traced(id))));
    expect(reads[1]!.trim().split("\n")).toEqual(["w-1", "w-2", "w-3"].map((id) => request(id)));
    answerHeld();
    await expect(held).resolves.toMatchObject({ trace_id: "hold" });
  });

  it("a cancelled call rejects with its reason, the agent's handler is cancelled by a control line, and the connection serves on", async () => {
    const aborted: string[] = [];
    const started: string[] = [];
    const manifest = {
      aip: "1" as const,
      name: "t",
      version: "1",
      description: "test",
      capabilities: ["echo"],
      languages: ["*"],
      resources: { cpu: "100m", memory: "64Mi", gpu: false },
      max_concurrent: 8,
      timeouts_ms: { default: 10_000 },
    };
    const invoker = new AgentInvoker(
      {
        manifest,
        handlers: {
          echo: (req, ctx) =>
            new Promise((resolve) => {
              started.push(ctx.traceId);
              const t = setTimeout(() => resolve({ done: true }), (req.constraints as { ms?: number }).ms ?? 0);
              ctx.signal.addEventListener("abort", () => {
                clearTimeout(t);
                aborted.push(ctx.traceId);
              });
            }),
        },
      },
      createLogger({ agentName: "t", destination: false }),
    );
    const socket = join(tmp.dir, "runtime.sock");
    const server = await AipServer.listen({ socketPath: socket, invoke: (v, ctx) => invoker.invoke(v, ctx.signal) });
    servers.push(server);
    transport = ndjsonTransport(socket, 4);
    const body = (id: string, ms: number): string =>
      JSON.stringify({ action: "echo", context: {}, constraints: { ms }, trace_id: id });
    const long = traced("long-1");
    const slow = transport.send(body("long-1", 60_000), long);
    const quick = transport.send(body("quick-1", 100), traced("quick-1"));
    // Cancelled once its handler runs: before, the agent would have no handler to cancel.
    await vi.waitFor(() => expect(started).toContain("long-1"), { timeout: 20_000 });
    long.abort(new AipError("AIP_ERR_TIMEOUT", "deadline"));
    await expect(slow).rejects.toMatchObject({ code: "AIP_ERR_TIMEOUT" });
    await expect(quick).resolves.toMatchObject({ trace_id: "quick-1", status: "success" });
    expect(aborted).toEqual(["long-1"]);
    // The cancelled call's own answer (AIP_ERR_CANCELLED) came and was dropped; the same connection serves on.
    await expect(transport.send(body("next-1", 0), traced("next-1"))).resolves.toMatchObject({
      trace_id: "next-1",
      status: "success",
    });
    expect(server.connections).toBe(1);
  });

  it("two calls with the same trace id in flight go on two connections, each answered", async () => {
    const { socket, server } = await agent(async (v) => {
      await new Promise((r) => setTimeout(r, v.ms as number));
      return { ms: v.ms };
    });
    transport = ndjsonTransport(socket, 4);
    const [a, b] = (await Promise.all([
      transport.send(request("same", { ms: 80 }), traced("same")),
      transport.send(request("same", { ms: 1 }), traced("same")),
    ])) as { payload: { ms: number } }[];
    expect([a!.payload.ms, b!.payload.ms]).toEqual([80, 1]);
    expect(server.connections).toBe(2);
  });

  it("a call with the trace id of a cancelled call whose answer has not come goes on another connection, and gets its own answer", async () => {
    // The cancelled call's answer is held until the second call has its own.
    let seen = 0;
    let answerFirst = (): void => undefined;
    const { socket, conns } = await rawNdjsonAgent((s, line) => {
      const n = ++seen;
      const write = (): unknown => s.write(`${envelope(line, { n, connection: conns.indexOf(s) })}\n`);
      if (n === 1) answerFirst = write;
      else write();
    });
    transport = ndjsonTransport(socket, 4);
    const first = traced("again");
    const cancelled = transport.send(request("again"), first).catch((e: unknown) => e);
    await vi.waitFor(() => expect(seen).toBeGreaterThan(0), { timeout: 20_000 });
    first.abort(new AipError("AIP_ERR_CANCELLED", "superseded"));
    expect(await cancelled).toMatchObject({ code: "AIP_ERR_CANCELLED" });
    const second = await transport.send(request("again"), traced("again"));
    expect(second).toMatchObject({ trace_id: "again", payload: { n: 2, connection: 1 } });
    expect(conns).toHaveLength(2);
    answerFirst();
  });

  it("an answer that cannot be matched (no trace id, not JSON) fails every call on the connection and closes it", async () => {
    for (const bad of ['{"status":"maybe","payload":1}', "not json"]) {
      const { socket, conns } = await rawNdjsonAgent((s, line) => {
        if ((JSON.parse(line) as { trace_id: string }).trace_id === "x-2") s.write(`${bad}\n`);
      });
      transport = ndjsonTransport(socket, 4);
      const calls = ["x-1", "x-2"].map((id) => transport!.send(request(id), traced(id)).catch((e: unknown) => e));
      for (const err of await Promise.all(calls)) {
        expect(err).toBeInstanceOf(BrokenAnswer);
        expect(neverReachedAgent(err)).toBe(false);
      }
      await vi.waitFor(() => expect(conns.every((c) => c.destroyed || c.readableEnded)).toBe(true), {
        timeout: 20_000,
      });
      await transport.close();
    }
  });

  it("a large request goes on a connection of its own: small ones written after it are answered while the agent leaves it unread", async () => {
    // The agent reads nothing of its first connection (the large request's) until told: on a shared
    // connection the small requests would wait behind the unread megabytes.
    const { socket, conns } = await rawNdjsonAgent(
      (s, line) => s.write(`${envelope(line, { connection: conns.indexOf(s), bytes: line.length })}\n`),
      (s, n) => n === 0 && s.pause(),
    );
    transport = ndjsonTransport(socket, 4);
    const big = request("big-1", { context: { source_code: "a".repeat(2 * 1024 * 1024) } });
    const large = transport.send(big, traced("big-1"));
    const answers = (await Promise.all(
      ["small-1", "small-2"].map((id) => transport!.send(request(id), traced(id))),
    )) as {
      trace_id: string;
      payload: { connection: number };
    }[];
    expect(answers.map((a) => [a.trace_id, a.payload.connection])).toEqual([
      ["small-1", 1],
      ["small-2", 1],
    ]);
    conns[0]!.resume();
    await expect(large).resolves.toMatchObject({ trace_id: "big-1", payload: { connection: 0, bytes: big.length } });
    expect(conns).toHaveLength(2);
  });

  it("no socket: never reached (may be retried); the agent closing before answering: reached, not retried", async () => {
    transport = ndjsonTransport(join(tmp.dir, "absent.sock"), 2);
    const gone = await transport.send(request("gone-1"), traced("gone-1")).catch((e: unknown) => e);
    expect((gone as NodeJS.ErrnoException).code).toBe("ENOENT");
    expect(neverReachedAgent(gone)).toBe(true);
    const { socket } = await rawNdjsonAgent((s) => s.destroy());
    transport = ndjsonTransport(socket, 2);
    const crash = await transport.send(request("crash-1"), traced("crash-1")).catch((e: unknown) => e);
    expect((crash as Error).message).toContain("connection closed before the answer");
    expect(neverReachedAgent(crash)).toBe(false);
  });
});
