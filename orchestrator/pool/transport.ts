/**
 * How the pool reaches an agent (docs/performance.md, "The orchestrator hop"), two ways:
 *
 * - `ndjsonTransport` (the default): NDJSON with several requests in flight on one connection. Each
 *   connection starts with an `unordered` control line, so the agent writes answers as they are ready
 *   and they are matched by trace id; the requests of one event-loop turn go out in one `write`, and
 *   one read brings the answers ready together. A cancelled call sends a `cancel` control line
 *   (docs/aip-1.md, Control lines) and the connection stays open for the others.
 * - `httpTransport`: `POST /v1/invoke` over HTTP/1.1 keep-alive connections, one request in flight per
 *   connection, written and read by a minimal client of our own: the request head is one string, the
 *   answer's head is read for its status, length and framing only, and the body comes back as the
 *   agent wrote it. A cancelled call closes its connection, which the agent takes as the client going
 *   away.
 */
import { connect, type Socket } from "node:net";
import type { Cancellation } from "../../protocol/transport/cancel.js";
import { DEFAULT_LIMITS } from "../../protocol/contract/limits.js";
import { isValidTraceId } from "../../protocol/contract/trace.js";
import { TURN_BIG_BYTES } from "../../protocol/transport/turns.js";

export interface Transport {
  /**
   * Send one request to the agent; resolves with its answer: the body as the agent wrote it (HTTP), or
   * the answer already decoded, a JSON object with the request's trace id (NDJSON, which reads it to
   * match it). `cancel.traceId` is the request's trace id. Rejects with the cause on failure.
   */
  send(body: string, cancel: Cancellation): Promise<string | object>;
  close(): Promise<void>;
}

/**
 * Answers at least this long are passed on as the agent wrote them (orchestrator/request/forward.ts,
 * `passThrough`): its cost does not grow with the length, while encoding the decoded answer again
 * does, and passes it at about this length (docs/performance.md, The orchestrator hop).
 * Shorter ones are encoded again: cheaper than remembering their text.
 */
export const PASS_THROUGH_MIN_CHARS = 256;

/** Decoded answers and the text each was decoded from (`answerText`), for those passed through. */
const answerTexts = new WeakMap<object, string>();

/** `answer` was decoded from `text`, the agent's answer as it wrote it (remembered when long enough to pass on). */
export function noteAnswerText(answer: object, text: string): void {
  if (text.length >= PASS_THROUGH_MIN_CHARS) answerTexts.set(answer, text);
}

/**
 * The text a decoded answer was decoded from, as the agent wrote it (undefined for any other object, and
 * for answers shorter than PASS_THROUGH_MIN_CHARS): forwarding passes it on rather than encoding the
 * answer again (orchestrator/request/forward.ts, `finish`).
 */
export function answerText(answer: object): string | undefined {
  return answerTexts.get(answer);
}

/** The agent's answers on a connection could not be read or matched: its framing is lost. */
export class BrokenAnswer extends Error {
  readonly code = "EPROTO";

  constructor(
    message: string,
    /** The answer that could not be matched, decoded (undefined: it was not JSON). */
    readonly answer?: unknown,
  ) {
    super(message);
  }
}

/** Builds a transport for an agent socket; `maxConnections` bounds the idle connections kept. */
export type TransportFactory = (socketPath: string, maxConnections: number) => Transport;

/** Errors that mean the request never reached the agent (safe to retry once). */
const NOT_WRITTEN = new Set(["ECONNREFUSED", "ENOENT", "EAGAIN"]);

export function neverReachedAgent(err: unknown): boolean {
  return NOT_WRITTEN.has((err as { code?: string }).code ?? "");
}

/**
 * An idle connection is closed after this long, well before the agent's own idle timeout
 * (`idleTimeoutMs`, 60 s), so a request is never written to a connection the agent is closing.
 */
export const IDLE_CLOSE_MS = 30_000;
/** The largest answer head read from an agent (the front door allows 16 KiB of request head). */
export const MAX_ANSWER_HEAD_BYTES = 16 * 1024;
/** The largest answer body read from an agent. */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

const HEAD_END = Buffer.from("\r\n\r\n");
const CRLF = Buffer.from("\r\n");
const HTTP_PREFIX = Buffer.from("HTTP/1.");
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})/;

function failure(code: string, message: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(message);
  err.code = code;
  return err;
}

/** Why calls on a connection that closed before their answers failed: reset once connected, refused before. */
function closedFailure(connected: boolean, error: NodeJS.ErrnoException | undefined): NodeJS.ErrnoException {
  return connected
    ? failure(error?.code ?? "ECONNRESET", `connection closed before the answer${error ? ` (${error.message})` : ""}`)
    : (error ?? failure("ECONNREFUSED", "connection closed before it was established"));
}

/** The header name at `at` in `head` is `lower` (ASCII, case-insensitive; the length was checked). */
function sameName(head: string, at: number, lower: string): boolean {
  for (let i = 0; i < lower.length; i++) {
    const c = head.charCodeAt(at + i);
    const l = lower.charCodeAt(i);
    if (c !== l && !(l >= 0x61 && l <= 0x7a && (c | 0x20) === l)) return false;
  }
  return true;
}

/** Where the reading of the current answer is. */
type Phase = "idle" | "head" | "length" | "chunked" | "until-close";

/** One keep-alive connection to an agent, carrying one call at a time. */
class AgentConnection {
  readonly socket: Socket;
  private resolve: ((body: string) => void) | undefined;
  private reject: ((err: Error) => void) | undefined;
  private cancel: Cancellation | undefined;
  private phase: Phase = "idle";
  /** Bytes read and not yet consumed by the phase (a head, a chunk-size line). */
  private pending: Buffer | undefined;
  /** The body so far. */
  private body: Buffer[] = [];
  private bodyBytes = 0;
  /** Length phase: body bytes still to come; chunked: bytes of the current chunk still to come (-1: at a size line). */
  private remaining = 0;
  /** The answer asked for the connection to close after it (Connection: close, HTTP/1.0). */
  private closeAfter = false;
  private connected = false;
  /** The first error the socket reported. */
  private error: NodeJS.ErrnoException | undefined;
  private readonly onAbort = (reason: Error): void => {
    this.fail(reason);
    this.socket.destroy();
  };

  constructor(
    socketPath: string,
    private readonly onIdle: (c: AgentConnection) => void,
    private readonly onClose: (c: AgentConnection) => void,
  ) {
    this.socket = connect(socketPath);
    this.socket.once("connect", () => (this.connected = true));
    this.socket.on("data", (chunk: Buffer) => this.onData(chunk));
    this.socket.on("error", (err: NodeJS.ErrnoException) => (this.error ??= err));
    this.socket.on("close", () => {
      this.onClose(this);
      if (this.phase === "until-close" && !this.error) return this.complete();
      this.fail(closedFailure(this.connected, this.error));
    });
    this.socket.setTimeout(IDLE_CLOSE_MS, () => {
      if (this.phase === "idle") this.socket.destroy();
    });
  }

  send(body: string, cancel: Cancellation): Promise<string> {
    return new Promise((resolve, reject) => {
      if (cancel.reason) return reject(cancel.reason);
      this.resolve = resolve;
      this.reject = reject;
      this.cancel = cancel;
      this.phase = "head";
      cancel.onAbort(this.onAbort);
      this.socket.write(
        `POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
  }

  private settle(): void {
    this.cancel?.clear();
    this.cancel = undefined;
    this.resolve = undefined;
    this.reject = undefined;
    this.phase = "idle";
    this.pending = undefined;
    this.body = [];
    this.bodyBytes = 0;
  }

  private fail(err: Error): void {
    const reject = this.reject;
    this.settle();
    reject?.(err);
  }

  /** The answer is broken: the call fails and the connection, whose framing is lost, is closed. */
  private broken(message: string): void {
    this.fail(failure("EPROTO", message));
    this.socket.destroy();
  }

  private complete(): void {
    const resolve = this.resolve;
    const text = this.body.length === 1 ? this.body[0]!.toString("utf8") : Buffer.concat(this.body).toString("utf8");
    const reuse = !this.closeAfter && this.pending === undefined;
    const extra = this.pending !== undefined;
    this.settle();
    if (extra) {
      // Bytes after the answer, with no request asked: the framing is lost.
      this.socket.destroy();
    } else if (reuse) this.onIdle(this);
    else this.socket.destroy();
    resolve?.(text);
  }

  private onData(chunk: Buffer): void {
    if (this.phase === "idle") return this.broken("the agent wrote without a request");
    this.pending = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending !== undefined && this.resolve !== undefined) {
      const before = this.phase;
      if (before === "head") {
        if (!this.readHead()) return;
      } else if (before === "length") {
        this.readLength();
      } else if (before === "chunked") {
        if (!this.readChunked()) return;
      } else if (before === "until-close") {
        this.take(this.pending);
        this.pending = undefined;
      } else return;
    }
  }

  private take(bytes: Buffer): void {
    this.bodyBytes += bytes.length;
    if (this.bodyBytes > MAX_ANSWER_BYTES) return this.broken(`answer body over ${MAX_ANSWER_BYTES} bytes`);
    this.body.push(bytes);
  }

  /** Read the answer's head when it is whole; false while more is needed (or the call failed). */
  private readHead(): boolean {
    const buf = this.pending!;
    // Not an HTTP answer at all (an NDJSON line, garbage): known from its first bytes, not at a deadline.
    if (
      buf.compare(
        HTTP_PREFIX,
        0,
        Math.min(buf.length, HTTP_PREFIX.length),
        0,
        Math.min(buf.length, HTTP_PREFIX.length),
      ) !== 0
    ) {
      this.broken(`not an HTTP/1.x answer: ${JSON.stringify(buf.toString("latin1", 0, 40))}`);
      return false;
    }
    const end = buf.indexOf(HEAD_END);
    if (end === -1) {
      if (buf.length > MAX_ANSWER_HEAD_BYTES) this.broken(`answer head over ${MAX_ANSWER_HEAD_BYTES} bytes`);
      return false;
    }
    const head = buf.toString("latin1", 0, end);
    this.pending = end + 4 < buf.length ? buf.subarray(end + 4) : undefined;
    const status = STATUS_LINE.exec(head);
    if (!status) {
      this.broken(`not an HTTP/1.x answer: ${JSON.stringify(head.slice(0, 40))}`);
      return false;
    }
    const code = Number(status[2]);
    // An interim answer (100 Continue, 103 Early Hints): the real one follows.
    if (code >= 100 && code < 200) return true;
    let length = -1;
    let chunked = false;
    this.closeAfter = status[1] === "0";
    let at = head.indexOf("\r\n");
    while (at !== -1) {
      const start = at + 2;
      const next = head.indexOf("\r\n", start);
      const end = next === -1 ? head.length : next;
      at = next;
      const colon = head.indexOf(":", start);
      if (colon <= start || colon > end) continue;
      // Only the framing headers are read: the others (Date, Content-Type, …) are not copied or lowered.
      const nameLength = colon - start;
      if (nameLength === 14 && sameName(head, start, "content-length")) {
        const value = head.slice(colon + 1, end).trim();
        if (!/^\d{1,15}$/.test(value)) {
          this.broken(`bad Content-Length ${JSON.stringify(value)}`);
          return false;
        }
        length = Number(value);
      } else if (nameLength === 17 && sameName(head, start, "transfer-encoding"))
        chunked = /(^|[\s,])chunked\s*$/i.test(head.slice(colon + 1, end));
      else if (nameLength === 10 && sameName(head, start, "connection")) {
        const value = head
          .slice(colon + 1, end)
          .trim()
          .toLowerCase();
        if (value === "close") this.closeAfter = true;
        else if (value === "keep-alive" && status[1] === "0") this.closeAfter = false;
      }
    }
    if (chunked) {
      this.phase = "chunked";
      this.remaining = -1;
    } else if (length >= 0) {
      if (length > MAX_ANSWER_BYTES) {
        this.broken(`answer body over ${MAX_ANSWER_BYTES} bytes`);
        return false;
      }
      this.phase = "length";
      this.remaining = length;
      if (length === 0) this.complete();
    } else {
      this.phase = "until-close";
      this.closeAfter = true;
    }
    return true;
  }

  private readLength(): void {
    const buf = this.pending!;
    if (buf.length <= this.remaining) {
      this.take(buf);
      this.remaining -= buf.length;
      this.pending = undefined;
    } else {
      this.take(buf.subarray(0, this.remaining));
      this.pending = buf.subarray(this.remaining);
      this.remaining = 0;
    }
    if (this.remaining === 0 && this.resolve) this.complete();
  }

  /** Chunked transfer coding: size lines, chunks, and the trailer after the last (size 0). False while more is needed. */
  private readChunked(): boolean {
    for (;;) {
      const buf = this.pending;
      if (buf === undefined) return false;
      if (this.remaining === -1) {
        const eol = buf.indexOf(CRLF);
        if (eol === -1) {
          if (buf.length > 1024) this.broken("chunk size line over 1 KiB");
          return false;
        }
        const size = parseInt(buf.toString("latin1", 0, eol).split(";")[0]!.trim(), 16);
        if (!Number.isSafeInteger(size) || size < 0) {
          this.broken("bad chunk size");
          return false;
        }
        this.pending = eol + 2 < buf.length ? buf.subarray(eol + 2) : undefined;
        if (size === 0) {
          this.remaining = -2; // the trailer
          continue;
        }
        this.remaining = size;
      } else if (this.remaining === -2) {
        // Trailer fields end with an empty line; with none, the empty line comes at once.
        const end = buf.subarray(0, 2).equals(CRLF) ? 0 : buf.indexOf(HEAD_END);
        if (end === -1) return false;
        const after = end === 0 ? 2 : end + 4;
        this.pending = after < buf.length ? buf.subarray(after) : undefined;
        this.complete();
        return false;
      } else {
        // A chunk's data then its CRLF.
        if (buf.length < this.remaining + 2) return false;
        this.take(buf.subarray(0, this.remaining));
        if (!this.resolve) return false;
        if (buf[this.remaining] !== 0x0d || buf[this.remaining + 1] !== 0x0a) {
          this.broken("chunk data not followed by CRLF");
          return false;
        }
        this.pending = this.remaining + 2 < buf.length ? buf.subarray(this.remaining + 2) : undefined;
        this.remaining = -1;
      }
    }
  }
}

/** Persistent keep-alive connections to the agent's socket: an idle one is reused, else one is opened. */
export const httpTransport: TransportFactory = (socketPath, maxConnections) => {
  /** Idle connections, the most recently used last (reused first: the others may time out). */
  const idle: AgentConnection[] = [];
  const all = new Set<AgentConnection>();
  const onIdle = (c: AgentConnection): void => {
    if (idle.length < maxConnections) idle.push(c);
    else c.socket.destroy();
  };
  const onClose = (c: AgentConnection): void => {
    all.delete(c);
    const i = idle.lastIndexOf(c);
    if (i !== -1) idle.splice(i, 1);
  };
  return {
    send(body, cancel) {
      let c = idle.pop();
      if (!c) {
        c = new AgentConnection(socketPath, onIdle, onClose);
        all.add(c);
      }
      return c.send(body, cancel);
    },
    close: async () => {
      for (const c of all) c.socket.destroy();
    },
  };
};

/**
 * A new connection for every call, closed after the answer: no pooling at all. Only for
 * comparison in benchmarks (without a pool, latency under concurrency is many times worse).
 */
export const freshConnectionTransport: TransportFactory = (socketPath) => {
  const all = new Set<AgentConnection>();
  return {
    send(body, cancel) {
      const c = new AgentConnection(
        socketPath,
        (done) => done.socket.destroy(),
        (done) => all.delete(done),
      );
      all.add(c);
      return c.send(body, cancel);
    },
    close: async () => {
      for (const c of all) c.socket.destroy();
    },
  };
};

/** A request written on a multiplexed NDJSON connection and not answered yet. */
class MuxCall {
  constructor(
    readonly traceId: string,
    readonly resolve: (answer: object) => void,
    readonly reject: (err: Error) => void,
    readonly cancel: Cancellation,
    readonly connection: MuxConnection,
  ) {}

  /** Cancelled (deadline, client gone, superseded): the agent is told, the connection stays. */
  readonly onAbort = (reason: Error): void => {
    this.connection.cancelled(this);
    this.reject(reason);
  };
}

/** Requests in flight on one connection at most: the agents' own `maxPipelined` (protocol/contract/limits.ts). */
export const MUX_MAX_INFLIGHT = DEFAULT_LIMITS.maxPipelined;
const NEWLINE = 0x0a;
const UNORDERED = '{"control":"unordered"}\n';

/**
 * One NDJSON connection to an agent carrying up to MUX_MAX_INFLIGHT requests, answers matched by
 * trace id (one request per trace id in flight on it). Writes are gathered until the end of the
 * event-loop turn (setImmediate, after every socket read of the turn has been handled) and written
 * at once.
 */
class MuxConnection {
  readonly socket: Socket;
  private readonly calls = new Map<string, MuxCall>();
  /**
   * Cancelled calls whose answers (AIP_ERR_CANCELLED, or the answer already on its way) have not come
   * yet, by trace id: the agent still counts them in flight, and a new call with the same trace id
   * goes elsewhere, so that it is never given the old one's answer.
   */
  private readonly abandoned = new Map<string, number>();
  private out = UNORDERED;
  private flushScheduled = false;
  /** The start of an answer line whose newline has not arrived. */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private connected = false;
  /** The agent ended its side, or the connection failed: no new request is written on it. */
  private done = false;
  private error: NodeJS.ErrnoException | undefined;

  constructor(
    socketPath: string,
    private readonly onClose: (c: MuxConnection) => void,
  ) {
    this.socket = connect(socketPath);
    this.socket.once("connect", () => (this.connected = true));
    this.socket.on("data", (chunk: Buffer) => this.onData(chunk));
    this.socket.on("error", (err: NodeJS.ErrnoException) => (this.error ??= err));
    this.socket.on("end", () => (this.done = true));
    this.socket.on("close", () => {
      this.done = true;
      this.onClose(this);
      this.failAll(closedFailure(this.connected, this.error));
    });
    this.socket.setTimeout(IDLE_CLOSE_MS, () => {
      if (this.calls.size === 0) this.socket.destroy();
    });
  }

  /** Whether a request with this trace id can be written here now. */
  takes(traceId: string): boolean {
    return (
      !this.done &&
      this.calls.size + this.abandoned.size < MUX_MAX_INFLIGHT &&
      !this.calls.has(traceId) &&
      !this.abandoned.has(traceId)
    );
  }

  send(body: string, traceId: string, cancel: Cancellation): Promise<object> {
    return new Promise((resolve, reject) => {
      if (cancel.reason) return reject(cancel.reason);
      const call = new MuxCall(traceId, resolve, reject, cancel, this);
      this.calls.set(traceId, call);
      cancel.onAbort(call.onAbort);
      this.write(body);
    });
  }

  /** A call was cancelled: forgotten here, and the agent told to stop it. */
  cancelled(call: MuxCall): void {
    if (this.calls.get(call.traceId) !== call) return;
    this.calls.delete(call.traceId);
    this.abandoned.set(call.traceId, (this.abandoned.get(call.traceId) ?? 0) + 1);
    if (!this.done) this.write(`{"control":"cancel","trace_id":${JSON.stringify(call.traceId)}}`);
  }

  private write(line: string): void {
    this.out += line + "\n";
    if (this.flushScheduled) return;
    // Alone on the connection (one client, or a quiet moment): nothing to gather, written at once.
    if (this.calls.size <= 1) return this.flush();
    this.flushScheduled = true;
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    const out = this.out;
    this.out = "";
    if (!this.socket.destroyed && out !== "") this.socket.write(out);
  };

  private failAll(err: Error): void {
    const calls = [...this.calls.values()];
    this.calls.clear();
    for (const call of calls) {
      call.cancel.clear();
      call.reject(err);
    }
  }

  /** The answers cannot be read or matched: every call on the connection fails and it is closed. */
  private broken(message: string, answer?: unknown): void {
    this.done = true;
    this.failAll(new BrokenAnswer(message, answer));
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    let nl = chunk.indexOf(NEWLINE);
    while (nl !== -1) {
      let line: string;
      if (this.partialBytes > 0) {
        this.partial.push(chunk.subarray(start, nl));
        line = Buffer.concat(this.partial).toString("utf8");
        this.partial = [];
        this.partialBytes = 0;
      } else line = chunk.toString("utf8", start, nl);
      this.answer(line);
      if (this.socket.destroyed) return;
      start = nl + 1;
      nl = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) {
      this.partialBytes += chunk.length - start;
      if (this.partialBytes > MAX_ANSWER_BYTES) return this.broken(`answer line over ${MAX_ANSWER_BYTES} bytes`);
      this.partial.push(chunk.subarray(start));
    }
  }

  private answer(line: string): void {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return this.broken(`answered with non-JSON: ${JSON.stringify(line.slice(0, 120))}`);
    }
    const traceId = (json as { trace_id?: unknown } | null)?.trace_id;
    if (typeof json !== "object" || json === null || Array.isArray(json) || !isValidTraceId(traceId))
      return this.broken("broke the AIP-1 envelope: an answer without a valid trace_id to match it by", json);
    const call = this.calls.get(traceId);
    if (call === undefined) {
      // A cancelled call's answer, or an older agent's answer to a control line (not asked): dropped.
      const left = this.abandoned.get(traceId);
      if (left === 1) this.abandoned.delete(traceId);
      else if (left !== undefined) this.abandoned.set(traceId, left - 1);
      return;
    }
    this.calls.delete(traceId);
    call.cancel.clear();
    noteAnswerText(json, line);
    call.resolve(json);
  }
}

/**
 * NDJSON to the agent's socket, several requests in flight on a connection (module comment): a request
 * goes on the first connection with room for it, else on a new one; one left idle closes after
 * IDLE_CLOSE_MS.
 *
 * Large requests (TURN_BIG_BYTES or more, as the agent's fair turns count them) go on connections of
 * their own, never on those of small ones (docs/performance.md, "The hostile neighbour"): on one
 * connection a small request written after a 1 MiB one reaches the agent only once the agent has read
 * the whole 1 MiB, a read at a time, and its answer waits for that line's decoding and handling too.
 * On two connections the agent reads both in each turn of its event loop, and the small one is
 * answered while the large one is still arriving.
 */
export const ndjsonTransport: TransportFactory = (socketPath) => {
  const small: MuxConnection[] = [];
  const large: MuxConnection[] = [];
  const onClose = (c: MuxConnection): void => {
    for (const list of [small, large]) {
      const i = list.indexOf(c);
      if (i !== -1) list.splice(i, 1);
    }
  };
  return {
    send(body, cancel) {
      const traceId = cancel.traceId;
      if (traceId === undefined) return Promise.reject(new Error("an NDJSON call needs the request's trace id"));
      // UTF-16 code units: never more than the UTF-8 bytes, and counted without encoding the body.
      const list = body.length >= TURN_BIG_BYTES ? large : small;
      let c: MuxConnection | undefined;
      for (const candidate of list) {
        if (candidate.takes(traceId)) {
          c = candidate;
          break;
        }
      }
      if (c === undefined) {
        c = new MuxConnection(socketPath, onClose);
        list.push(c);
      }
      return c.send(body, traceId, cancel);
    },
    close: async () => {
      for (const c of [...small, ...large]) c.socket.destroy();
    },
  };
};
