import { spawn, type ChildProcess } from "node:child_process";
import { connect, type Socket } from "node:net";
import { lstatSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { successResponse } from "../../../protocol/contract/envelope.js";
import { AipServer, type ServerEvent } from "../../../protocol/transport/server.js";
import { httpRequest, ndjsonExchange } from "../../../protocol/transport/client.js";
import { DIST } from "../../helpers.js";
import { serverFixture } from "../lib/servers.js";

const fixture = serverFixture();
const start = fixture.start;

describe("socket file", () => {
  it("is 0660 with the configured group", async () => {
    const gid = process.getgid!();
    const s = await start({ group: gid });
    const st = lstatSync(s.socketPath);
    expect(st.mode & 0o777).toBe(0o660);
    expect(st.gid).toBe(gid);
  });

  it("refuses a path that is not a socket, and one that is too long", async () => {
    const path = join(fixture.dir, "s.sock");
    writeFileSync(path, "not a socket");
    await expect(start()).rejects.toThrow(/exists and is not a socket/);
    await expect(
      AipServer.listen({
        socketPath: join(fixture.dir, "x".repeat(120)),
        invoke: async () => successResponse({}, "t"),
      }),
    ).rejects.toThrow(/limit is 107/);
  });

  it("refuses to take over a live server's socket", async () => {
    const first = await start();
    await expect(start()).rejects.toThrow(/Another server is listening/);
    expect((await httpRequest(first.socketPath, { body: "{}" })).status).toBe(200);
  });

  it("is removed on close", async () => {
    const s = await start();
    await s.close();
    expect(existsSync(s.socketPath)).toBe(false);
  });
});

describe("limits", () => {
  it("closes connections beyond maxConnections and keeps serving the others", async () => {
    const s = await start({ limits: { maxConnections: 3 } });
    const held = await Promise.all(
      [0, 1, 2].map(
        () =>
          new Promise<ReturnType<typeof connect>>((resolve) => {
            const c = connect(s.socketPath, () => resolve(c));
          }),
      ),
    );
    await expect(httpRequest(s.socketPath, { body: "{}", timeoutMs: 5000 })).rejects.toThrow();
    held[0]!.destroy();
    // Once a slot frees up, a new client is served (the server notices the close asynchronously).
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++)
      status = await httpRequest(s.socketPath, { body: "{}" }).then(
        (r) => r.status,
        () => 0,
      );
    expect(status).toBe(200);
    held.forEach((c) => c.destroy());
  });

  /** Send a request head that never ends; what the server wrote before it closed the connection. */
  const slowHead = (socketPath: string): Promise<string> =>
    new Promise<string>((resolve) => {
      const c = connect(socketPath, () => c.write("POST /v1/invoke HTTP/1.1\r\nHost: aip\r\n"));
      let out = "";
      c.on("data", (d) => (out += d.toString()));
      c.on("close", () => resolve(out));
    });

  it("answers a slow HTTP head with 408 after headersTimeout (slowloris)", async () => {
    const s = await start({ limits: { headersTimeoutMs: 200, requestReceiveTimeoutMs: 300 } });
    const reply = await slowHead(s.socketPath);
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    expect(reply).toContain("AIP_ERR_INVALID_JSON");
  });

  it("a request deadline shorter than the head's: the server starts, and a slow head gets 408 at the shorter", async () => {
    // node:http refuses headersTimeout > requestTimeout; the head is part of the request, so its deadline is clamped.
    const s = await start({ limits: { headersTimeoutMs: 120_000, requestReceiveTimeoutMs: 300 } });
    const reply = await slowHead(s.socketPath);
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
  });

  it("answers 413 for a declared body over the limit even when the body never comes", async () => {
    const s = await start({ limits: { maxBodyBytes: 1000 } });
    const reply = await new Promise<string>((resolve) => {
      const c = connect(s.socketPath, () =>
        c.write("POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Length: 10000\r\n\r\n"),
      );
      let out = "";
      c.on("data", (d) => (out += d.toString()));
      c.on("close", () => resolve(out));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toContain("Connection: close");
  });

  it("drains a moderately oversized body before answering 413, so the client reads the answer", async () => {
    const s = await start({ limits: { maxBodyBytes: 1000 } });
    const r = await httpRequest(s.socketPath, { body: "x".repeat(3000) });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body).error.type).toBe("AIP_ERR_PAYLOAD_TOO_LARGE");
  });

  it("closes idle connections after idleTimeoutMs", async () => {
    const s = await start({ limits: { idleTimeoutMs: 100 } });
    const closed = await new Promise<boolean>((resolve) => {
      const c = connect(s.socketPath);
      c.on("close", () => resolve(true));
    });
    expect(closed).toBe(true);
  });

  it("bounds an NDJSON line and recovers on the next line", async () => {
    const s = await start({ limits: { maxLineBytes: 100 } });
    const lines = await ndjsonExchange(s.socketPath, `{"a":"${"x".repeat(500)}"}\n{"b":1}\n`);
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!).error.type).toBe("AIP_ERR_PAYLOAD_TOO_LARGE");
    expect(JSON.parse(lines[1]!).payload).toEqual({ echo: { b: 1 } });
  });
});

describe("framing", () => {
  it("keeps answering in order when handlers finish out of order", async () => {
    const s = await start({
      invoke: async (req) => {
        const ms = (req as { ms: number }).ms;
        await new Promise((r) => setTimeout(r, ms));
        return successResponse({ ms }, "t");
      },
    });
    const lines = await ndjsonExchange(s.socketPath, [50, 1, 20, 0].map((ms) => JSON.stringify({ ms })).join("\n"));
    expect(lines.map((l) => JSON.parse(l).payload.ms)).toEqual([50, 1, 20, 0]);
  });

  it("respects backpressure: a client that does not read does not block other clients", async () => {
    const big = "y".repeat(64 * 1024);
    const s = await start({ invoke: async () => successResponse({ big }, "t"), limits: { maxPipelined: 4 } });
    const stuck = connect(s.socketPath);
    await new Promise<void>((r) => stuck.once("connect", () => r()));
    stuck.pause();
    stuck.write(Array.from({ length: 200 }, () => "{}\n").join(""));
    const other = await httpRequest(s.socketPath, { body: "{}" });
    expect(other.status).toBe(200);
    // The server stopped reading the stuck connection instead of buffering 200 x 64 KiB answers.
    expect(s.inflight).toBeLessThanOrEqual(4);
    stuck.destroy();
  });

  it("aborts the handler's signal when an HTTP client goes away", async () => {
    let aborted: Promise<unknown> | undefined;
    const s = await start({
      invoke: (_req, ctx) => {
        aborted = new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve(ctx.signal.reason)));
        return new Promise(() => undefined);
      },
    });
    const c = connect(s.socketPath, () =>
      c.write("POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Length: 2\r\n\r\n{}"),
    );
    while (!aborted) await new Promise((r) => setImmediate(r));
    c.destroy();
    expect(await aborted).toMatchObject({ code: "AIP_ERR_CANCELLED" });
  });

  it("answers unknown routes with AIP_ERR_NO_ROUTE naming the served ones", async () => {
    const s = await start({ routes: { "GET /healthz": async () => ({ status: 200, body: "{}" }) } });
    const r = await httpRequest(s.socketPath, { method: "GET", path: "/nope" });
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body).error.suggestion).toContain("GET /healthz");
  });
});

describe("listenBacklog", () => {
  /** A server in a child process (stopped below, so it accepts nothing); resolves with its pid once it listens. */
  async function stoppedServer(socketPath: string, backlog: number | undefined): Promise<number> {
    const limits = backlog === undefined ? "{}" : `{ listenBacklog: ${backlog} }`;
    const child = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { AipServer } from ${JSON.stringify(join(DIST, "protocol/transport/server.js"))};
         await AipServer.listen({ socketPath: ${JSON.stringify(socketPath)}, invoke: async () => ({}), limits: ${limits} });
         process.stdout.write("listening\\n");`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once("data", () => resolve());
      child.once("exit", (code) => reject(new Error(`server exited ${code}`)));
    });
    process.kill(child.pid!, "SIGSTOP");
    return child.pid!;
  }
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) {
      process.kill(c.pid!, "SIGCONT");
      c.kill("SIGKILL");
    }
  });

  /** Connect `n` times to a server that accepts nothing; how many the kernel took before refusing (EAGAIN). */
  async function held(socketPath: string, n: number): Promise<{ held: number; refused: string[] }> {
    const sockets: Socket[] = [];
    const refused: string[] = [];
    for (let i = 0; i < n; i++) {
      await new Promise<void>((resolve) => {
        const s = connect(socketPath);
        s.once("connect", () => {
          sockets.push(s);
          resolve();
        });
        s.once("error", (err: NodeJS.ErrnoException) => {
          refused.push(err.code ?? err.message);
          resolve();
        });
      });
    }
    for (const s of sockets) s.destroy();
    return { held: sockets.length, refused };
  }

  it("the kernel holds listenBacklog connections for a server that is not accepting, then refuses at once", async () => {
    const small = join(fixture.dir, "small.sock");
    await stoppedServer(small, 8);
    const r = await held(small, 40);
    // Linux queues backlog + 1 on a Unix socket.
    expect(r.held).toBeGreaterThanOrEqual(8);
    expect(r.held).toBeLessThanOrEqual(9);
    expect(r.refused[0]).toBe("EAGAIN");
  });

  it("by default holds every one of 600 connections (Node's own default, 511, would refuse some)", async () => {
    const big = join(fixture.dir, "big.sock");
    await stoppedServer(big, undefined);
    const r = await held(big, 600);
    expect(r).toEqual({ held: 600, refused: [] });
  });
});

describe("close: the keep-alive linger", () => {
  /** One HTTP/1.1 keep-alive request for the socket, as raw bytes. */
  const raw = (body: string) =>
    `POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

  it("a request read in the drain's last moment (a starved process reading what waited) is answered before its connection goes", async () => {
    // Each answer takes 30 ms, as an agent's would: in flight when the linger ends.
    const events: ServerEvent[] = [];
    const s = await start({
      keepAliveLingerMs: 50,
      onEvent: (e) => events.push(e),
      invoke: async (req) => {
        await new Promise((r) => setTimeout(r, 30));
        return successResponse({ echo: req }, "t");
      },
    });
    const sock = connect(s.socketPath);
    await new Promise<void>((r) => sock.once("connect", () => r()));
    let received = "";
    sock.on("data", (d: Buffer) => (received += d.toString()));
    const closed = new Promise<void>((r) => sock.once("close", () => r()));
    sock.on("error", () => undefined);
    const body = JSON.stringify({ action: "echo", context: { source_code: "a" }, constraints: {} });
    sock.write(raw(body));
    await vi.waitFor(() => expect(received).toContain('"status":"success"'), { timeout: 10_000, interval: 10 });
    const closing = s.close(3000);
    // The next request reaches the kernel while the process is starved past the whole linger.
    setTimeout(() => {
      sock.write(raw(body));
      const end = Date.now() + 150;
      while (Date.now() < end); // the event loop is held: nothing is read meanwhile
    }, 5);
    await closing;
    await closed;
    expect(received.split('"status":"success"').length - 1).toBe(2);
    expect(received).toMatch(/connection: close/i);
    // Whatever the drain closed at its end had its answer written first.
    for (const e of events) if (e.event === "drain_closed") expect(e.unflushed).toBe(0);
  });

  /** Two connections to `s`: `idle`, held by the server (one request answered on it), and `busy`, fresh. */
  async function idleAndBusy(s: AipServer): Promise<{ idle: Socket; busy: Socket }> {
    const idle = connect(s.socketPath);
    const busy = connect(s.socketPath);
    for (const k of [idle, busy]) k.on("error", () => undefined);
    await Promise.all([idle, busy].map((k) => new Promise<void>((r) => k.once("connect", () => r()))));
    const first = new Promise<void>((r) => idle.once("data", () => r()));
    idle.write(raw(JSON.stringify({ action: "echo", context: {}, constraints: {} })));
    await first;
    return { idle, busy };
  }

  it("a connection whose request is read but not yet answered at the drain's end is answered, not cut", async () => {
    const events: ServerEvent[] = [];
    const s = await start({ keepAliveLingerMs: 0, onEvent: (e) => events.push(e) });
    const { idle, busy } = await idleAndBusy(s);
    // The busy one's request is read (its head: the server's 100 Continue says so) and its body still arriving.
    const body = JSON.stringify({ action: "echo", context: { source_code: "late body" }, constraints: {} });
    let received = "";
    busy.on("data", (d: Buffer) => (received += d.toString()));
    const continued = new Promise<void>((r) => busy.once("data", () => r()));
    busy.write(
      `POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );
    await continued;
    expect(received).toMatch(/^HTTP\/1\.1 100 Continue/);
    const busyClosed = new Promise<void>((r) => busy.once("close", () => r()));
    const closing = s.close(3000);
    // The drain's end closes the idle connection; only then does the rest of the busy one's body come.
    await new Promise<void>((r) => idle.once("close", () => r()));
    busy.write(body.slice(10));
    await closing;
    await busyClosed;
    expect(received).toContain('"source_code":"late body"');
    expect(received).toMatch(/connection: close/i);
    expect(events.filter((e) => e.event === "drain_closed")).toEqual([
      { event: "drain_closed", connections: 1, unflushed: 0, answering: 1 },
    ]);
  });

  it("a request the HTTP fast path is answering at the drain's end is answered, not cut", async () => {
    const events: ServerEvent[] = [];
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const inFlight = new Promise<void>((r) => (started = r));
    const s = await start({
      keepAliveLingerMs: 0,
      onEvent: (e) => events.push(e),
      invoke: async (req) => {
        if ((req as { context?: { source_code?: string } }).context?.source_code === "slow") {
          started();
          await released;
        }
        return successResponse({ echo: req }, "t");
      },
    });
    const { idle, busy } = await idleAndBusy(s);
    let received = "";
    busy.on("data", (d: Buffer) => (received += d.toString()));
    busy.write(raw(JSON.stringify({ action: "echo", context: { source_code: "slow" }, constraints: {} })));
    await inFlight;
    const busyClosed = new Promise<void>((r) => busy.once("close", () => r()));
    const closing = s.close(3000);
    await new Promise<void>((r) => idle.once("close", () => r()));
    release();
    await closing;
    await busyClosed;
    expect(received).toContain('"source_code":"slow"');
    expect(received).toMatch(/connection: close/i);
    expect(s.httpHandedOver).toBe(0);
    expect(events.filter((e) => e.event === "drain_closed")).toEqual([
      { event: "drain_closed", connections: 1, unflushed: 0, answering: 1 },
    ]);
  });

  it("connections still open at the drain's end are closed and counted (drain_closed)", async () => {
    const events: ServerEvent[] = [];
    const s = await start({ keepAliveLingerMs: 30, onEvent: (e) => events.push(e) });
    const socks = [connect(s.socketPath), connect(s.socketPath)];
    await Promise.all(socks.map((k) => new Promise<void>((r) => k.once("connect", () => r()))));
    for (const k of socks) k.on("error", () => undefined);
    // Both accepted before the drain: wait until the server holds them (a request answered on each).
    for (const k of socks) {
      const answered = new Promise<void>((r) => k.once("data", () => r()));
      k.write(raw(JSON.stringify({ action: "echo", context: {}, constraints: {} })));
      await answered;
    }
    await s.close(1000);
    expect(events.filter((e) => e.event === "drain_closed")).toEqual([
      { event: "drain_closed", connections: 2, unflushed: 0 },
    ]);
    for (const k of socks) k.destroy();
  });
});
