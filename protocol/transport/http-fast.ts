/**
 * The common HTTP request read without `node:http` (docs/performance.md, "The orchestrator hop"): a whole
 * `POST /v1/invoke HTTP/1.1` with a plain head and its Content-Length body, arrived in the connection's
 * bytes, answered with one write. One malformed request is answered here too, as `node:http` answers it
 * (400, then the connection closed): a chunked body whose first chunk size does not start with a hex
 * digit (docs/performance.md, "The hostile neighbour"). Anything else on the connection — another route, chunked or missing
 * framing, Expect, Upgrade, a head or body not yet whole, pipelined requests, bytes the strict grammar
 * below does not admit — hands the connection, with every byte not yet answered, to `node:http` for the
 * rest of its life (protocol/transport/http.ts), which has the limits, timeouts and hostile-input answers. So this
 * path only ever accepts what `node:http` would have read the same way, and answers it the same way.
 */
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { AipResponse } from "../contract/schemas.js";
import { httpStatusOf, responseJson } from "../contract/envelope.js";

/** The one request line this path reads. */
const INVOKE_LINE = Buffer.from("POST /v1/invoke HTTP/1.1\r\n");
/** Heads longer than this go to `node:http` (whose limit is 16 KiB). */
export const FAST_HEAD_MAX_BYTES = 8 * 1024;
/** Bytes read ahead of the request being answered (a pipelining client) before reading pauses. */
const READ_AHEAD_MAX_BYTES = 64 * 1024;

/** tchar (RFC 9110 5.6.2): the bytes of a header name. */
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
  TCHAR[c.charCodeAt(0)] = 1;

/** What the fast path needs from the HTTP framing it stands in front of. */
export interface FastHost {
  readonly maxBodyBytes: number;
  readonly idleTimeoutMs: number;
  answer(body: Buffer, signal: AbortSignal, socket: Socket): Promise<AipResponse>;
  draining(): boolean;
  handlerError(err: unknown): void;
  /** A request's answer was written, or given up: the connection may be idle now. */
  answered(socket: Socket): void;
  /** Give the connection to `node:http`, `rest` (bytes read and not answered) first. */
  handOver(socket: Socket, rest: Buffer | undefined): void;
  /**
   * Answer a malformed request as `node:http`'s parse error `err` is answered (400, Connection: close),
   * and close the connection; what the client sends after it is read and dropped.
   */
  refuse(socket: Socket, err: Readonly<NodeJS.ErrnoException>): void;
}

/** A connection the fast path serves. */
export interface FastConnection {
  /**
   * A request is being answered: the connection's idle timeout does not apply (node:http lifts it
   * while it answers, too).
   */
  readonly answering: boolean;
  /** A request's answer is being worked out, on a connection still served or one ending (its client half-closed). */
  readonly inFlight: boolean;
}

/** A request the fast path read: where its body is, and whether the client asked to close after it. */
interface Parsed {
  bodyStart: number;
  bodyEnd: number;
  close: boolean;
  /** A malformed request, answered as `node:http` answers this parse error of it, never invoked. */
  refuse?: Readonly<NodeJS.ErrnoException>;
}

/** Hex digits: what a chunk size starts with (RFC 9112 7.1). */
const HEXDIG = new Uint8Array(256);
for (const c of "0123456789abcdefABCDEF") HEXDIG[c.charCodeAt(0)] = 1;

/**
 * A whole head of a chunked invoke whose body's first byte cannot start a chunk size: `node:http`
 * (llhttp) fails it with this error, and the server answers it 400 and closes (protocol/transport/http.ts).
 */
export const BAD_CHUNK_SIZE: Readonly<NodeJS.ErrnoException> = Object.freeze(
  Object.assign(new Error("Parse Error: Invalid character in chunk size"), { code: "HPE_INVALID_CHUNK_SIZE" }),
);

/**
 * Parse one whole simple invoke at the start of `buf` (`refuse` set for a chunked one whose body starts
 * with a byte no chunk size starts with: `BAD_CHUNK_SIZE`); undefined when it is anything else (not whole, not
 * simple, or followed by more bytes), which `node:http` then reads.
 */
export function parseSimpleInvoke(buf: Buffer, maxBodyBytes: number): Parsed | undefined {
  if (
    buf.length < INVOKE_LINE.length + 2 ||
    buf.compare(INVOKE_LINE, 0, INVOKE_LINE.length, 0, INVOKE_LINE.length) !== 0
  )
    return undefined;
  const limit = Math.min(buf.length, FAST_HEAD_MAX_BYTES);
  let length = -1;
  let close = false;
  let chunked = false;
  let at = INVOKE_LINE.length;
  for (;;) {
    if (at + 1 >= limit) return undefined;
    if (buf[at] === 0x0d) {
      if (buf[at + 1] !== 0x0a) return undefined;
      const bodyStart = at + 2;
      // Chunked (alone, no Content-Length beside it): only a body that is bad from its first byte is
      // answered here; a chunked body that may be good, or is not here yet, is node:http's.
      if (chunked)
        return length < 0 && bodyStart < buf.length && HEXDIG[buf[bodyStart]!] !== 1
          ? { bodyStart, bodyEnd: bodyStart, close: true, refuse: BAD_CHUNK_SIZE }
          : undefined;
      if (length < 0) return undefined;
      // Exactly one request, whole: anything short or beyond it (pipelining) is node:http's.
      if (buf.length !== bodyStart + length) return undefined;
      return { bodyStart, bodyEnd: bodyStart + length, close };
    }
    // A header line: name, ':', optional blanks, value of visible ASCII, spaces and tabs, CRLF.
    const nameStart = at;
    while (at < limit && TCHAR[buf[at]!] === 1) at++;
    if (at === nameStart || at >= limit || buf[at] !== 0x3a) return undefined;
    const nameEnd = at++;
    while (at < limit && (buf[at] === 0x20 || buf[at] === 0x09)) at++;
    const valueStart = at;
    while (at < limit && ((buf[at]! >= 0x20 && buf[at]! <= 0x7e) || buf[at] === 0x09)) at++;
    if (at + 1 >= limit || buf[at] !== 0x0d || buf[at + 1] !== 0x0a) return undefined;
    let valueEnd = at;
    while (valueEnd > valueStart && (buf[valueEnd - 1] === 0x20 || buf[valueEnd - 1] === 0x09)) valueEnd--;
    at += 2;
    const nameLength = nameEnd - nameStart;
    // Only the framing headers matter here; the rest are read by no one on this route.
    if (nameLength === 14 && sameName(buf, nameStart, "content-length")) {
      if (length >= 0 || valueEnd - valueStart < 1 || valueEnd - valueStart > 15) return undefined;
      let n = 0;
      for (let i = valueStart; i < valueEnd; i++) {
        const d = buf[i]! - 0x30;
        if (d < 0 || d > 9) return undefined;
        n = n * 10 + d;
      }
      if (n > maxBodyBytes) return undefined; // the 413 and its linger are node:http's
      length = n;
    } else if (nameLength === 10 && sameName(buf, nameStart, "connection")) {
      const value = buf.toString("latin1", valueStart, valueEnd).toLowerCase();
      if (value === "close") close = true;
      else if (value !== "keep-alive") return undefined;
    } else if (nameLength === 17 && sameName(buf, nameStart, "transfer-encoding")) {
      if (chunked || valueEnd - valueStart !== 7 || !sameName(buf, valueStart, "chunked")) return undefined;
      chunked = true;
    } else if (
      (nameLength === 6 && sameName(buf, nameStart, "expect")) ||
      (nameLength === 7 && sameName(buf, nameStart, "upgrade"))
    ) {
      return undefined;
    }
  }
}

/** The header name at `at` is `lower` (ASCII, case-insensitive; the length was checked). */
function sameName(buf: Buffer, at: number, lower: string): boolean {
  for (let i = 0; i < lower.length; i++) if ((buf[at + i]! | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}

/** The Date header's value, formatted once per second as `node:http` does. */
let dateSecond = -1;
let dateText = "";
export function httpDate(): string {
  const now = Date.now();
  const s = Math.floor(now / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/** The answer as `node:http` writes it for HttpFraming.sendJson: status line, the same headers, the body. */
export function answerBytes(response: AipResponse, close: boolean, keepAliveSeconds: number | undefined): string {
  const body = responseJson(response);
  const status = httpStatusOf(response);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "unknown"}\r\n` +
    `Content-Type: ${response.status === "success" ? "application/json" : "application/problem+json"}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nDate: ${httpDate()}\r\n` +
    (close
      ? "Connection: close\r\n\r\n"
      : keepAliveSeconds === undefined
        ? "Connection: keep-alive\r\n\r\n"
        : `Connection: keep-alive\r\nKeep-Alive: timeout=${keepAliveSeconds}\r\n\r\n`) +
    body
  );
}

/**
 * Serve a connection's simple invokes until something else comes; then `host.handOver` it. Requests are
 * answered one at a time, in order; bytes that arrive meanwhile wait (at most READ_AHEAD_MAX_BYTES, then
 * reading pauses; reading also pauses while the client leaves answers unread). A client that half-closes is answered as `node:http` answers it: the connection ends.
 * `first`: the connection's first bytes, already read (the server's sniffer), taken before any others.
 */
export function serveFast(socket: Socket, signal: AbortSignal, host: FastHost, first?: Buffer): FastConnection {
  let pending: Buffer | undefined;
  let busy = false;
  /** Reading stopped until the client reads the answers written (see `next`). */
  let waitingDrain = false;
  let done = false;
  const state: FastConnection = {
    get answering() {
      return busy && !done;
    },
    get inFlight() {
      return busy;
    },
  };
  // node:http announces its keep-alive timeout, in whole seconds, when it has one.
  const keepAliveSeconds = host.idleTimeoutMs > 0 ? Math.floor(host.idleTimeoutMs / 1000) : undefined;

  const handOver = (): void => {
    done = true;
    socket.off("data", onData);
    socket.off("end", onEnd);
    const rest = pending;
    pending = undefined;
    host.handOver(socket, rest);
  };

  const run = (buf: Buffer, req: Parsed): void => {
    busy = true;
    host.answer(buf.subarray(req.bodyStart, req.bodyEnd), signal, socket).then(
      (response) => {
        busy = false;
        if (done || socket.destroyed) return host.answered(socket);
        const close = req.close || host.draining();
        socket.write(answerBytes(response, close, keepAliveSeconds));
        if (close) {
          done = true;
          socket.off("data", onData);
          socket.end();
          return host.answered(socket);
        }
        host.answered(socket);
        next();
      },
      (err: unknown) => {
        busy = false;
        host.handlerError(err);
        socket.destroy();
        host.answered(socket);
      },
    );
  };

  /**
   * After an answer: the next request, unless the client is not reading its answers (the socket's
   * write buffer is over its high-water mark): then reading stops until they drain, as node:http
   * stops, so a client that never reads holds one answer's worth of memory, not one per request.
   */
  const next = (): void => {
    if (done) return;
    if (socket.writableNeedDrain) {
      waitingDrain = true;
      socket.pause();
      socket.once("drain", () => {
        waitingDrain = false;
        next();
      });
      return;
    }
    if (socket.isPaused()) socket.resume();
    if (pending === undefined) return;
    const buf = pending;
    pending = undefined;
    take(buf);
  };

  const take = (buf: Buffer): void => {
    const req = parseSimpleInvoke(buf, host.maxBodyBytes);
    if (req === undefined) {
      pending = buf;
      return handOver();
    }
    if (req.refuse !== undefined) {
      done = true;
      socket.off("data", onData);
      socket.off("end", onEnd);
      return host.refuse(socket, req.refuse);
    }
    run(buf, req);
  };

  function onData(chunk: Buffer): void {
    if (busy || waitingDrain) {
      pending = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
      if (pending.length > READ_AHEAD_MAX_BYTES) socket.pause();
      return;
    }
    take(chunk);
  }

  function onEnd(): void {
    // node:http (httpAllowHalfOpen off) ends the connection when its client half-closes; a request
    // being answered is cancelled when the connection then closes.
    done = true;
    socket.off("data", onData);
    if (socket.writable) socket.end();
  }

  socket.on("data", onData);
  socket.on("end", onEnd);
  if (first !== undefined) onData(first);
  return state;
}
