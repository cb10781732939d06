/**
 * AIP-1 over HTTP/1.1 on a connection the server has already sniffed (see server.ts): `POST /v1/invoke`,
 * the extra routes, the body limit, and an answer for every malformed or unfinished request.
 * The NDJSON framing lives beside it in ndjson.ts.
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from "node:http";
import { setMaxListeners } from "node:events";
import type { Socket } from "node:net";
import { AipError, problem } from "../contract/errors.js";
import { errorResponse, httpStatusOf, responseJson } from "../contract/envelope.js";
import { decodeJson } from "./json.js";
import type { Limits } from "../contract/limits.js";
import type { AipResponse } from "../contract/schemas.js";
import { RateLimit } from "../util/log.js";
import { newTraceId } from "../contract/trace.js";
import { httpDate, serveFast, type FastConnection, type FastHost } from "./http-fast.js";

export interface RouteResponse {
  status: number;
  body: string;
  contentType?: string;
}

export interface RouteContext {
  signal: AbortSignal;
  url: URL;
  /** Decoded JSON body for POST routes (undefined when empty). */
  body: unknown;
}

export type RouteHandler = (ctx: RouteContext) => Promise<RouteResponse>;

/** What the HTTP framing needs from the server that accepted the connection. */
export interface HttpHost {
  readonly limits: Limits;
  /** Extra routes keyed "METHOD /path". */
  readonly routes: Record<string, RouteHandler>;
  /** Decode and answer one `POST /v1/invoke` body; never throws. */
  answer(body: Buffer, signal: AbortSignal, socket: Socket): Promise<AipResponse>;
  /** True once the server is shutting down: each answer then closes its connection. */
  draining(): boolean;
  /** A malformed request arrived (rate-limited by the host). */
  clientError(err: NodeJS.ErrnoException): void;
  /** A route handler threw something that is not an AipError. */
  handlerError(traceId: string, err: unknown): void;
}

const JSON_TYPE = "application/json";
const PROBLEM_TYPE = "application/problem+json";
/** How long a request over the body limit may go on sending (dropped) before it is answered 413 and closed. */
const LINGER_MS = 2000;

/**
 * Malformed requests answered at once in any one second; past that, each answer waits its turn, one
 * every 1000 / REFUSALS_PER_S ms (`HttpFraming.pace`, docs/performance.md "The hostile neighbour").
 */
export const REFUSALS_PER_S = 50;
/** At most this many answers wait; past that, answered at once (a waiting answer holds its connection). */
export const REFUSALS_WAITING_MAX = 100;

/**
 * The failure a malformed request is answered with, per parse error code: one AipError each, made once
 * (a new Error, with its stack, per bad request was a visible share of what such a connection cost).
 */
const malformed = new Map<string, AipError>();

/** The answer to a request node:http failed with `err` (a parse error, its head too large, its time out). */
function clientErrorAnswer(err: Readonly<NodeJS.ErrnoException>): { status: number; failure: AipError } {
  const key = err.code ?? "";
  const timeout = key === "ERR_HTTP_REQUEST_TIMEOUT";
  let failure = malformed.get(key);
  if (failure === undefined) {
    const p =
      key === "HPE_HEADER_OVERFLOW"
        ? problem("AIP_ERR_PAYLOAD_TOO_LARGE", { detail: "HTTP request head is larger than 16 KiB" })
        : problem("AIP_ERR_INVALID_JSON", {
            detail: timeout
              ? "HTTP request did not arrive in time"
              : `Malformed HTTP request (${err.code ?? "parse error"})`,
            suggestion: "Send HTTP/1.1 (POST /v1/invoke) or one JSON object per line",
          });
    failure = new AipError(p.type, p.detail, { suggestion: p.suggestion });
    // Codes are node:http's and llhttp's own (a few dozen): the map stays small.
    malformed.set(key, failure);
  }
  return { status: timeout ? 408 : failure.status, failure };
}

export class HttpFraming {
  private readonly http: HttpServer;
  /** HTTP responses not yet finished, per connection (a parse error must not cut them off). */
  private readonly responding = new WeakMap<Socket, Set<ServerResponse>>();
  /** Responses whose request body went bad or ran out of time: answered by onClientError, never invoked. */
  private readonly failedBodies = new WeakSet<ServerResponse>();
  /** Each connection's signal, aborted when it closes (see accept). */
  private readonly closed = new WeakMap<Socket, AbortSignal>();
  /** Waiting for a connection's answers to be finished (`answered`). */
  private readonly answeredWaiters = new WeakMap<Socket, (() => void)[]>();
  /** What the fast path needs: the same answer, limits and drain as node:http's requests get. */
  private readonly fast: FastHost;
  private readonly fastConnections = new WeakMap<Socket, FastConnection>();

  constructor(private readonly host: HttpHost) {
    const limits = host.limits;
    this.fast = {
      maxBodyBytes: limits.maxBodyBytes,
      idleTimeoutMs: limits.idleTimeoutMs,
      answer: (body, signal, socket) => host.answer(body, signal, socket),
      draining: () => host.draining(),
      handlerError: (err) => host.handlerError("", err),
      answered: (socket) => this.wakeAnswered(socket),
      handOver: (socket, rest) => {
        this.handedOver++;
        socket.pause();
        if (rest !== undefined) socket.unshift(rest);
        this.http.emit("connection", socket);
        socket.resume();
      },
      // Answered by the same onClientError as node:http's parse errors (its body went bad before any of it
      // was read), without handing the connection to node:http: a connection's whole cost, for a client
      // that opens one per bad request, was mostly node:http's (docs/performance.md, "The hostile neighbour").
      refuse: (socket, err) => {
        // What the client sends after it is read and dropped (so its end is seen, waiting or not).
        socket.resume();
        this.onClientError(err as NodeJS.ErrnoException, socket);
      },
    };
    this.http = createHttpServer(
      {
        keepAliveTimeout: limits.idleTimeoutMs,
        // The head is part of the request: its deadline is never the later one (node:http refuses that).
        headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestReceiveTimeoutMs),
        requestTimeout: limits.requestReceiveTimeoutMs,
        maxHeaderSize: 16 * 1024,
        // A Unix socket has no host to name: clients writing raw HTTP/1.1 often omit Host, and Node's
        // own check would answer them a bare 400 instead of an AIP-1 envelope.
        requireHostHeader: false,
        connectionsCheckingInterval: Math.max(
          50,
          Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestReceiveTimeoutMs) / 2)),
        ),
      },
      (req, res) =>
        void this.onHttp(req, res).catch((err: unknown) => {
          this.host.handlerError("", err);
          res.destroy();
        }),
    );
    // Node enforces headersTimeout/requestTimeout only for servers that emitted "listening";
    // ours never listens itself (connections are handed over after sniffing), so start its checker.
    this.http.emit("listening");
    this.http.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => this.onClientError(err, socket));
  }

  /** Serve HTTP on a connection: `first`, its first bytes as the sniffer read them, or put back (unshifted) on it. */
  accept(socket: Socket, first?: Buffer): void {
    // One signal per connection, aborted when it closes: a request still being answered then is
    // cancelled, one already answered is not affected. HTTP/1.1 answers a connection's requests in
    // order, so this is the request's own signal without an AbortController per request
    // (docs/performance.md, "The orchestrator hop").
    const controller = new AbortController();
    setMaxListeners(0, controller.signal);
    this.closed.set(socket, controller.signal);
    // Only a request being answered listens: a connection that closes idle (most do) needs no abort,
    // nor its error (this listener runs before node:http's, so a response it still has is counted).
    socket.once("close", () => {
      if (this.fastConnections.get(socket)?.inFlight || (this.responding.get(socket)?.size ?? 0) > 0)
        controller.abort(new AipError("AIP_ERR_CANCELLED", "Client closed the connection"));
    });
    // The common request is read without node:http until the connection sends something else (http-fast.ts).
    this.fastConnections.set(socket, serveFast(socket, controller.signal, this.fast, first));
  }

  /** Connections given to node:http after (or instead of) the fast path, since start. */
  private handedOver = 0;
  /** Malformed requests answered at once this second (`pace`). */
  private readonly refusalsNow = new RateLimit(REFUSALS_PER_S);
  /** Answers to malformed requests waiting their turn, oldest first (`pace`). */
  private readonly refusalsWaiting: (() => void)[] = [];
  private refusalTimer: NodeJS.Timeout | undefined;

  /**
   * Answer a malformed request now or, past REFUSALS_PER_S in a second, in its turn: one every
   * 1000 / REFUSALS_PER_S ms, oldest first. A client that sends nothing but malformed requests, a new
   * connection for each as soon as the last is answered (the hostile neighbour's bad chunk sizes), is
   * then served at that rate rather than as fast as the front door can refuse them, and takes that much
   * less of the thread the others' requests run on; a well-formed request never waits here, and a
   * malformed one at most REFUSALS_WAITING_MAX turns (docs/performance.md, "The hostile neighbour").
   */
  private pace(answer: () => void): void {
    if (this.refusalsWaiting.length === 0 && this.refusalsNow.take() !== undefined) return answer();
    if (this.refusalsWaiting.length >= REFUSALS_WAITING_MAX) return answer();
    this.refusalsWaiting.push(answer);
    this.refusalTimer ??= setInterval(() => {
      this.refusalsWaiting.shift()?.();
      if (this.refusalsWaiting.length === 0) {
        clearInterval(this.refusalTimer);
        this.refusalTimer = undefined;
      }
    }, 1000 / REFUSALS_PER_S).unref();
  }

  get handedOverCount(): number {
    return this.handedOver;
  }

  close(): void {
    clearInterval(this.refusalTimer);
    this.refusalTimer = undefined;
    for (const answer of this.refusalsWaiting.splice(0)) answer();
    this.http.close();
  }

  /**
   * Whether a request read on this connection is still being answered (its body read, or its answer
   * made), by the fast path or by node:http: a drain waits for it.
   */
  answering(socket: Socket): boolean {
    return (this.fastConnections.get(socket)?.answering ?? false) || (this.responding.get(socket)?.size ?? 0) > 0;
  }

  /**
   * The fast path is working out an answer on this connection (its idle timeout is then lifted, as
   * node:http's is while it answers). Narrower than `answering`: an answer written but not yet taken by
   * a client that does not read is not working, and the idle timeout still closes that connection.
   */
  computing(socket: Socket): boolean {
    return this.fastConnections.get(socket)?.answering ?? false;
  }

  /** The connection answered what it read: wake those waiting for that (`answered`). */
  private wakeAnswered(socket: Socket): void {
    if (!this.answering(socket)) for (const wake of this.answeredWaiters.get(socket)?.splice(0) ?? []) wake();
  }

  /** Resolves once no request read on this connection is being answered (each finished or torn down). */
  answered(socket: Socket): Promise<void> {
    if (!this.answering(socket)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.answeredWaiters.get(socket);
      if (waiting) waiting.push(resolve);
      else this.answeredWaiters.set(socket, [resolve]);
    });
  }

  /** Remember the responses still being produced on a connection, until each is finished or torn down. */
  private track(socket: Socket, res: ServerResponse): void {
    let open = this.responding.get(socket);
    if (!open) this.responding.set(socket, (open = new Set()));
    open.add(res);
    res.once("close", () => {
      open.delete(res);
      this.wakeAnswered(socket);
    });
  }

  private onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
    this.host.clientError(err);
    if (!socket.writable || err.code === "ECONNRESET") {
      socket.destroy();
      return;
    }
    const tooLarge = err.code === "HPE_HEADER_OVERFLOW";
    const timeout = err.code === "ERR_HTTP_REQUEST_TIMEOUT";
    const { status, failure } = clientErrorAnswer(err);
    const pending = [...(this.responding.get(socket) ?? [])];
    // The request whose body was being read when the bytes went bad (or its time ran out) is answered
    // itself, through its own response: after the answers of the requests read before it, in order.
    // Waiting for it instead would wait for ever (see docs/aip-1.md, Limits: a bad or unfinished body gets an answer).
    const unfinished = pending.find((res) => !res.req.complete);
    if (unfinished) {
      this.failedBodies.add(unfinished);
      if (!unfinished.headersSent) {
        unfinished.setHeader("Connection", "close");
        this.sendJson(unfinished, errorResponse(failure, newTraceId()), status);
      }
      // Its answer ends the connection (Connection: close); a client that never reads it is not waited for.
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
      return;
    }
    const body = JSON.stringify(errorResponse(failure, newTraceId()));
    const send = (): void => {
      if (!socket.writable) return void socket.destroy();
      socket.end(
        `HTTP/1.1 ${status} ${timeout ? "Request Timeout" : tooLarge ? "Payload Too Large" : "Bad Request"}\r\n` +
          `Content-Type: ${PROBLEM_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nDate: ${httpDate()}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      );
      // A client that never ends its side is not waited for.
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
    // Requests parsed before the bad bytes are answered first, in order; then the 400 and the close,
    // in its turn (`pace`).
    if (pending.length === 0) return this.pace(send);
    let left = pending.length;
    for (const res of pending) res.once("close", () => --left === 0 && this.pace(send));
  }

  private async onHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const socket = req.socket as Socket;
    this.track(socket, res);
    const signal = this.closed.get(socket) ?? AbortSignal.abort(new AipError("AIP_ERR_CANCELLED", "No connection"));
    // The invoke path as it always comes needs no URL parsing (a few microseconds per request).
    const plainInvoke = req.url === "/v1/invoke" && req.method === "POST";
    const url = plainInvoke ? undefined : new URL(req.url ?? "/", "http://aip");
    const key = url ? `${req.method ?? "GET"} ${url.pathname}` : "POST /v1/invoke";
    const isInvoke = key === "POST /v1/invoke";
    const route = this.host.routes[key];
    if (!isInvoke && !route) {
      req.resume();
      const allowed = this.routeKeys().filter((k) => k.endsWith(` ${url!.pathname}`));
      const detail = allowed.length > 0 ? `${key} is not served; use ${allowed.join(" or ")}` : `No route ${key}`;
      this.sendJson(
        res,
        errorResponse(
          new AipError("AIP_ERR_NO_ROUTE", detail, { suggestion: `Routes: ${this.routeKeys().join(", ")}` }),
          newTraceId(),
        ),
      );
      return;
    }
    const body = await this.readBody(req, res);
    if (body === undefined) return;
    if (isInvoke) {
      const response = await this.host.answer(body, signal, socket);
      this.sendJson(res, response);
      return;
    }
    try {
      const parsed = body.length === 0 ? undefined : decodeJson(body, this.host.limits.maxJsonDepth);
      const out = await route!({ signal, url: url!, body: parsed });
      if (res.destroyed) return;
      if (this.host.draining()) res.setHeader("Connection", "close");
      res.writeHead(out.status, {
        "Content-Type": out.contentType ?? JSON_TYPE,
        "Content-Length": Buffer.byteLength(out.body),
      });
      res.end(out.body);
    } catch (err) {
      const traceId = newTraceId();
      if (!(err instanceof AipError)) this.host.handlerError(traceId, err);
      this.sendJson(res, errorResponse(err, traceId));
    }
  }

  private routeKeys(): string[] {
    return ["POST /v1/invoke", ...Object.keys(this.host.routes)];
  }

  /**
   * Read the body within the limit. On overflow the rest of the body is read and dropped, and 413 is
   * answered (then the connection closed) at the end of the body, after 4x the limit, or after
   * LINGER_MS, whichever comes first: closing while the client still writes made it see EPIPE
   * instead of the 413.
   */
  private readBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined> {
    const limit = this.host.limits.maxBodyBytes;
    const drainCap = 4 * limit;
    let linger: NodeJS.Timeout | undefined;
    const answerTooLarge = (): void => {
      clearTimeout(linger);
      if (res.headersSent) return;
      const err = new AipError("AIP_ERR_PAYLOAD_TOO_LARGE", `Request body exceeds the limit of ${limit} bytes`, {
        extensions: { limit },
      });
      res.setHeader("Connection", "close");
      this.sendJson(res, errorResponse(err, newTraceId()));
    };
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      const overflow = (): void => {
        over = true;
        chunks.length = 0;
        linger = setTimeout(answerTooLarge, LINGER_MS);
        resolve(undefined);
      };
      if (Number(req.headers["content-length"] ?? NaN) > limit) overflow();
      req.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (over) {
          if (size > drainCap) answerTooLarge();
          return;
        }
        if (size > limit) overflow();
        else chunks.push(chunk);
      });
      req.once("end", () => {
        if (over) answerTooLarge();
        else if (this.failedBodies.has(res)) resolve(undefined);
        else resolve(Buffer.concat(chunks));
      });
      // A body that went bad or ran out of time was answered by onClientError: stop waiting for it.
      res.once("close", () => resolve(undefined));
      req.once("error", () => resolve(undefined));
      req.once("close", () => {
        clearTimeout(linger);
        if (!req.complete) resolve(undefined);
      });
    });
  }

  private sendJson(res: ServerResponse, response: AipResponse, status = httpStatusOf(response)): void {
    if (res.destroyed || res.headersSent) return;
    // While shutting down, the client learns not to send more on this connection (it is closed after this answer).
    if (this.host.draining()) res.setHeader("Connection", "close");
    const body = responseJson(response);
    res.writeHead(status, {
      "Content-Type": response.status === "success" ? JSON_TYPE : PROBLEM_TYPE,
      "Content-Length": Buffer.byteLength(body),
    });
    res.end(body);
  }
}
