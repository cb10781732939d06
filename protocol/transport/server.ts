/**
 * The AIP-1 socket server every agent and the orchestrator use: one Unix socket,
 * HTTP/1.1 keep-alive or NDJSON chosen by the first byte of each connection.
 */
import { createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
import { lstat, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { AipError } from "../contract/errors.js";
import { errorResponse, responseJson } from "../contract/envelope.js";
import { HttpFraming, type RouteHandler } from "./http.js";
import { DecodeWorker, type DecodedRequest } from "./decode-worker.js";
import { decodeJsonText, type JsonSource } from "./json.js";
import { resolveLimits, type Limits } from "../contract/limits.js";
import { serveNdjson } from "./ndjson.js";
import type { AipResponse } from "../contract/schemas.js";
import { MAX_SOCKET_PATH_BYTES, applySocketPermissions, prepareSocketPath, removeSocketFile } from "./socket-file.js";
import { RateLimit } from "../util/log.js";
import { newTraceId } from "../contract/trace.js";
import { FairTurns, TURN_BIG_BYTES, type TurnStats } from "./turns.js";
import { traceIdOf } from "../contract/validate.js";

export interface InvokeContext {
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  framing: "http" | "ndjson";
  /**
   * This server's id for the client connection the request came on (unique for the server's lifetime).
   * Latest-wins is scoped by it, so two clients never cancel each other (docs/agents.md "Latest wins").
   */
  connection: number;
  /** The JSON the request was decoded from: what forwarding it unchanged sends on (orchestrator/request/forward.ts). */
  source: JsonSource;
}

/** Answers one decoded JSON request. Throwing is allowed: the server turns it into an AIP-1 error. */
export type InvokeHandler = (request: unknown, ctx: InvokeContext) => Promise<AipResponse>;

export type { RouteContext, RouteHandler, RouteResponse } from "./http.js";

export type ServerEvent =
  | { event: "client_error"; message: string; code?: string; suppressed?: number }
  | { event: "connection_dropped"; connections: number }
  /** At the end of a drain: connections still open were closed, `unflushed` of them with answer bytes unsent. */
  | { event: "drain_closed"; connections: number; unflushed: number; answering?: number }
  | { event: "handler_error"; trace_id: string; error: unknown };

export interface AipServerOptions {
  socketPath: string;
  invoke: InvokeHandler;
  /** Extra HTTP routes keyed "METHOD /path", e.g. "GET /healthz". */
  routes?: Record<string, RouteHandler>;
  limits?: Partial<Limits>;
  /** Group that may connect: the socket becomes 0660 with this group; otherwise 0600. */
  group?: string | number;
  /**
   * An already listening socket to accept on (systemd socket activation, or a reload's handover)
   * instead of creating `socketPath`: its file, mode and removal belong to whoever made it.
   */
  fd?: number;
  /** With `fd`: the socket file is ours all the same (a reload's handover), removed at close like our own. */
  ownsFile?: boolean;
  /**
   * At shutdown, how long each idle keep-alive connection is kept for a request already on its way
   * (answered with Connection: close); 0 (the default) closes idle connections at once.
   */
  keepAliveLingerMs?: number;
  onEvent?: (event: ServerEvent) => void;
  /**
   * Requests of at least this many bytes are decoded in a worker thread, and `invoke` gets their
   * skeleton (protocol/transport/decode-worker.ts) and their JSON in `source`: only for a server that forwards
   * requests rather than reading them whole (the orchestrator). Unset: every request decoded whole here.
   */
  decodeWorkerBytes?: number;
  /**
   * An NDJSON connection that asked for unordered answers (docs/aip-1.md, Control lines) carries many
   * clients' requests, shared fairly between them by its client (the orchestrator's pool,
   * orchestrator/pool/slots.ts): with this set its small requests start at once, not paced against the
   * other connections as one client (fair turns, protocol/transport/turns.ts); its large ones (TURN_BIG_BYTES)
   * still wait for their turn. For agents, whose client is the orchestrator; the front door paces every
   * connection.
   */
  trustUnordered?: boolean;
}

/** Temporary socket names bound by this process (see start()). */
let boundCount = 0;
/** Malformed-request events logged per second at most (a flood of bad bytes must not become a flood of log). */
const CLIENT_ERROR_EVENTS_PER_S = 10;

/** The answer to a request whose connection closed before its turn came. */
const cancelledResponse = (): AipResponse =>
  errorResponse(new AipError("AIP_ERR_CANCELLED", "Client closed the connection"), newTraceId());

function isHttpStart(byte: number): boolean {
  return byte >= 0x41 && byte <= 0x5a; // an uppercase letter: GET, POST, PUT, …
}

function firstNonBlank(buf: Buffer): number {
  for (const b of buf) if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a) return b;
  return -1;
}

export class AipServer {
  readonly socketPath: string;
  readonly limits: Limits;
  private readonly net: NetServer;
  private readonly http: HttpFraming;
  private readonly sockets = new Set<Socket>();
  private readonly connectionIds = new WeakMap<Socket, number>();
  private connectionCount = 0;
  private inflightCount = 0;
  private ino: number | undefined;
  private closing: Promise<void> | undefined;
  private idleWaiters: (() => void)[] = [];
  /** Woken when a connection closes (shutdown waits for keep-alive connections to end). */
  private socketWaiters: (() => void)[] = [];
  /** Shutting down: answer what was read, then close each connection (HTTP: Connection: close). */
  private draining = false;
  private handedOver = false;
  private readonly ndjsonDrains = new Set<() => void>();
  private readonly clientErrors = new RateLimit(CLIENT_ERROR_EVENTS_PER_S);
  /** Whose request runs next on this thread: fair turns between connections (protocol/transport/turns.ts). */
  private readonly turns = new FairTurns();
  /** Large requests decoded off the event loop (`decodeWorkerBytes`). */
  private readonly decoder: DecodeWorker | undefined;

  private constructor(private readonly options: AipServerOptions) {
    this.socketPath = options.socketPath;
    this.limits = resolveLimits(options.limits);
    if (options.decodeWorkerBytes !== undefined)
      this.decoder = new DecodeWorker(options.decodeWorkerBytes, this.limits.maxJsonDepth);
    this.http = new HttpFraming({
      limits: this.limits,
      routes: options.routes ?? {},
      answer: (body, signal, socket) => {
        const connection = this.connectionIds.get(socket) ?? 0;
        return this.turns.run(
          connection,
          body.length,
          () => this.answer(body, signal, "http", connection),
          () => cancelledResponse(),
        );
      },
      draining: () => this.draining,
      clientError: (err) => this.emitClientError(err),
      handlerError: (traceId, error) => this.emit({ event: "handler_error", trace_id: traceId, error }),
    });
    this.net = createNetServer({ allowHalfOpen: true }, (socket) => this.onConnection(socket));
    this.net.maxConnections = this.limits.maxConnections;
    this.net.on("drop", () => this.emit({ event: "connection_dropped", connections: this.sockets.size }));
  }

  /** Create the server and listen on its socket file (stale file replaced, live server refused). */
  static async listen(options: AipServerOptions): Promise<AipServer> {
    const server = new AipServer(options);
    await server.start();
    return server;
  }

  /** The listening socket's descriptor, for handing it to a successor (a reload); undefined before listen. */
  get listeningFd(): number | undefined {
    const fd = (this.net as unknown as { _handle?: { fd?: number } })._handle?.fd;
    return typeof fd === "number" && fd >= 0 ? fd : undefined;
  }

  /** A successor accepts on this socket now: close() leaves the socket file in place. */
  handOver(): void {
    this.handedOver = true;
  }

  get inflight(): number {
    return this.inflightCount;
  }

  get connections(): number {
    return this.sockets.size;
  }

  /** HTTP connections given to node:http: they sent something other than the common request (protocol/transport/http-fast.ts). */
  get httpHandedOver(): number {
    return this.http.handedOverCount;
  }

  /** Requests waiting for their connection's turn on the event loop (protocol/transport/turns.ts). */
  get turnStats(): TurnStats {
    return this.turns.stats();
  }

  private emit(event: ServerEvent): void {
    this.options.onEvent?.(event);
  }

  /** Malformed input is reported at most `CLIENT_ERROR_EVENTS_PER_S` times a second; the rest are counted in the next one. */
  private emitClientError(err: NodeJS.ErrnoException): void {
    const suppressed = this.clientErrors.take();
    if (suppressed === undefined) return;
    this.emit({
      event: "client_error",
      message: err.message,
      ...(err.code ? { code: err.code } : {}),
      ...(suppressed > 0 ? { suppressed } : {}),
    });
  }

  private async start(): Promise<void> {
    if (this.options.fd !== undefined) {
      const fd = this.options.fd;
      await new Promise<void>((resolve, reject) => {
        this.net.once("error", reject);
        this.net.listen({ fd }, this.limits.listenBacklog, () => {
          this.net.off("error", reject);
          resolve();
        });
      });
      if (this.options.ownsFile) this.ino = (await lstat(this.socketPath)).ino;
      return;
    }
    await prepareSocketPath(this.socketPath);
    // Bound under a temporary name in the same directory, then renamed into place: libuv unlinks the
    // name it bound when the listener closes, and after a reload hands the socket to a successor that
    // name must not be the one clients use.
    const bound = join(dirname(this.socketPath), `.${process.pid.toString(36)}.${(++boundCount).toString(36)}`);
    const viaTemp = Buffer.byteLength(bound) <= MAX_SOCKET_PATH_BYTES;
    // Create the socket file 0600 from the start: no window where others could connect.
    const previous = process.umask(0o177);
    try {
      await new Promise<void>((resolve, reject) => {
        this.net.once("error", reject);
        this.net.listen({ path: viaTemp ? bound : this.socketPath, backlog: this.limits.listenBacklog }, () => {
          this.net.off("error", reject);
          resolve();
        });
      });
    } finally {
      process.umask(previous);
    }
    if (viaTemp) await rename(bound, this.socketPath);
    await applySocketPermissions(this.socketPath, this.options.group);
    this.ino = (await lstat(this.socketPath)).ino;
  }

  /** Serve a connection accepted elsewhere (e.g. a loopback TCP or TLS listener in the transport benchmark). */
  accept(socket: Socket): void {
    this.onConnection(socket);
  }

  private onConnection(socket: Socket): void {
    const connection = ++this.connectionCount;
    this.connectionIds.set(socket, connection);
    this.sockets.add(socket);
    socket.once("close", () => {
      this.sockets.delete(socket);
      this.turns.close(connection);
      for (const wake of this.socketWaiters.splice(0)) wake();
    });
    socket.on("error", () => socket.destroy());
    // Idle for idleTimeoutMs: closed, unless the HTTP fast path is answering a request on it (the timer
    // starts again with the answer's write).
    socket.setTimeout(this.limits.idleTimeoutMs);
    socket.on("timeout", () => {
      if (!socket.destroyed && !this.http.computing(socket)) socket.destroy();
    });
    let head: Buffer[] = [];
    const sniff = (chunk: Buffer): void => {
      head.push(chunk);
      const joined = head.length === 1 ? chunk : Buffer.concat(head);
      const first = firstNonBlank(joined);
      if (first === -1 && joined.length < this.limits.maxLineBytes) return; // only whitespace so far
      socket.off("data", sniff);
      socket.off("end", onEarlyEnd);
      head = [];
      if (isHttpStart(first)) {
        // The bytes are handed on as read, not put back on the socket to be read again (a pause, an
        // unshift and a resume per connection).
        this.http.accept(socket, joined);
        return;
      }
      socket.pause();
      socket.unshift(joined);
      // A trusted client's small requests start at once; its large ones (which the orchestrator sends on
      // connections of their own, orchestrator/pool/transport.ts) wait for their turn like anyone's, so
      // the small requests read in the same turn of the event loop are answered before one is decoded.
      const drain = serveNdjson(socket, this.limits, (bytes, signal, unordered) =>
        unordered && this.options.trustUnordered && bytes.length < TURN_BIG_BYTES
          ? this.answerFrame(bytes, signal, "ndjson", connection)
          : this.turns.run(
              connection,
              bytes.length,
              () => this.answerFrame(bytes, signal, "ndjson", connection),
              () => JSON.stringify(cancelledResponse()),
            ),
      );
      if (this.draining) drain();
      else {
        this.ndjsonDrains.add(drain);
        socket.once("close", () => this.ndjsonDrains.delete(drain));
      }
      socket.resume();
    };
    const onEarlyEnd = (): void => {
      socket.end();
    };
    socket.on("data", sniff);
    socket.once("end", onEarlyEnd);
  }

  /** Decode and answer one request frame, serialised; never rejects. */
  private answerFrame(
    bytes: Buffer,
    signal: AbortSignal,
    framing: "http" | "ndjson",
    connection: number,
  ): Promise<string> {
    return this.answer(bytes, signal, framing, connection).then(responseJson);
  }

  private async answer(
    bytes: Buffer,
    signal: AbortSignal,
    framing: "http" | "ndjson",
    connection: number,
  ): Promise<AipResponse> {
    let value: unknown;
    let source: JsonSource;
    this.inflightCount++;
    try {
      try {
        if (this.decoder && bytes.length >= this.decoder.minBytes)
          ({ value, source } = await this.decoder.decode(bytes));
        else ({ value, source } = this.decodeHere(bytes));
      } catch (err) {
        return errorResponse(err, newTraceId());
      }
      return await this.options.invoke(value, { signal, framing, connection, source });
    } catch (err) {
      const traceId = traceIdOf(value) ?? newTraceId();
      if (!(err instanceof AipError)) this.emit({ event: "handler_error", trace_id: traceId, error: err });
      return errorResponse(err, traceId);
    } finally {
      this.inflightCount--;
      if (this.inflightCount === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private decodeHere(bytes: Buffer): DecodedRequest {
    const { value, text } = decodeJsonText(bytes, this.limits.maxJsonDepth);
    return { value, source: { text } };
  }

  /** Stop accepting, let in-flight requests finish within `graceMs`, close connections, remove the socket file. */
  close(graceMs = this.limits.shutdownGraceMs): Promise<void> {
    this.closing ??= this.doClose(graceMs);
    return this.closing;
  }

  /**
   * A keep-alive connection idle at shutdown may have a request on its way (a client sends the next
   * one as soon as it has read an answer): each connection gets up to `keepAliveLingerMs` (at most
   * the grace) for it, answered with Connection: close, which ends the connection. Closing it at
   * once would leave that request unread (docs/operations.md, Operating it: reload).
   */
  private async lingerKeepAlive(graceMs: number): Promise<void> {
    const lingerMs = Math.min(graceMs, this.options.keepAliveLingerMs ?? 0);
    if (lingerMs <= 0) return;
    const end = Date.now() + lingerMs;
    while (this.sockets.size > 0 && Date.now() < end) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, end - Date.now()));
        this.socketWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    // A request that arrived in the last moment is answered too, within the grace.
    if (this.inflightCount > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private async doClose(graceMs: number): Promise<void> {
    this.draining = true;
    const closed = new Promise<void>((resolve) => this.net.close(() => resolve()));
    // NDJSON connections stop reading now and end after answering what they read; HTTP connections
    // answer their current request with Connection: close. A request read is answered; one not read is not.
    for (const drain of this.ndjsonDrains) drain();
    if ((this.options.fd === undefined || this.options.ownsFile) && !this.handedOver)
      await removeSocketFile(this.socketPath, this.ino);
    // Requests read and waiting for their turn are started (each turn starts some) and so counted in flight.
    this.turns.openAll();
    while (this.turns.stats().queued > 0) await new Promise((resolve) => setImmediate(resolve));
    if (this.inflightCount > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const graceEnd = Date.now() + graceMs;
    await this.lingerKeepAlive(graceMs);
    // Give the last answers a moment to be written before connections are torn down.
    await new Promise((resolve) => setImmediate(resolve));
    let unflushed = 0;
    const open = this.sockets.size;
    // A connection still answering a request it read (in the linger's last moment, or its body still
    // arriving) is not cut: cutting it would drop a request already read, answered AIP_ERR_CANCELLED to
    // a closed connection (seen in fault runs on an overloaded host). Its answer carries
    // Connection: close; it is waited for within what is left of the grace.
    const answering: Socket[] = [];
    for (const socket of this.sockets) {
      if (this.http.answering(socket)) answering.push(socket);
      else if (this.release(socket)) unflushed++;
    }
    // A request sent on one of the others after the linger is refused unread (the client sees the close):
    // the count says how many connections a drain cut, for a fault run to compare with its clients'.
    if (open > 0)
      this.options.onEvent?.({
        event: "drain_closed",
        connections: open - answering.length,
        unflushed,
        ...(answering.length > 0 ? { answering: answering.length } : {}),
      });
    if (answering.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(answering.map((socket) => this.http.answered(socket))),
        new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, graceEnd - Date.now())))),
      ]);
      clearTimeout(timer);
      for (const socket of answering) if (!socket.destroyed) this.release(socket);
    }
    this.http.close();
    this.decoder?.close();
    await closed;
  }

  /** Close a connection at the drain's end: at once, or after its unsent answer bytes (true), within 1 s. */
  private release(socket: Socket): boolean {
    if (socket.writableLength === 0) {
      socket.destroy();
      return false;
    }
    socket.end();
    setTimeout(() => socket.destroy(), 1000).unref();
    return true;
  }
}
