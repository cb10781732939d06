/**
 * NDJSON framing: one request a line, answers written in request order (or as they are ready, after an
 * `unordered` control line), backpressure both ways.
 *
 * Bounded per connection (docs/aip-1.md, Limits): at most `maxPipelined` requests in flight; no new line is
 * taken while `maxQueuedOutputBytes` of answers wait for a client that does not read; at most
 * `maxPipelined` lines are taken per turn of the event loop, so one connection's flood of lines
 * cannot hold the process; a line must arrive whole within `lineReceiveTimeoutMs` of its first byte.
 * Bytes read but not yet taken stay in a backlog of at most one socket read while reading is paused.
 */
import { setMaxListeners } from "node:events";
import type { Socket } from "node:net";
import { cancelTrace } from "./cancel.js";
import { AipError } from "../contract/errors.js";
import { errorResponse } from "../contract/envelope.js";
import type { Limits } from "../contract/limits.js";
import { isValidTraceId, newTraceId } from "../contract/trace.js";

/**
 * Answers one framed request (raw bytes, without the newline) with a serialised response. `unordered`:
 * the connection asked for its answers as they are ready (a control line), as a multiplexing client does.
 */
export type FrameHandler = (bytes: Buffer, signal: AbortSignal, unordered: boolean) => Promise<string>;

interface Slot {
  text: string | undefined;
}

const NEWLINE = 0x0a;
/** After the connection is told to end (line deadline), how long its answers may take to be read. */
const LINGER_MS = 2000;

const CONTROL_KEY = Buffer.from('"control"');

/** Whether `line` is a control line: an object whose first member is `control` (docs/aip-1.md, Control lines). */
export function isControlLine(line: Buffer): boolean {
  let i = 0;
  while (i < line.length && (line[i] === 0x20 || line[i] === 0x09 || line[i] === 0x0d)) i++;
  if (line[i] !== 0x7b) return false;
  i++;
  while (i < line.length && (line[i] === 0x20 || line[i] === 0x09 || line[i] === 0x0d || line[i] === 0x0a)) i++;
  return (
    line.length - i >= CONTROL_KEY.length &&
    line.compare(CONTROL_KEY, 0, CONTROL_KEY.length, i, i + CONTROL_KEY.length) === 0
  );
}

function isBlank(buf: Buffer): boolean {
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a) return false;
  }
  return true;
}

/**
 * Serve NDJSON on `socket` until the client ends or the connection closes. Returns `drain`: stop
 * reading, answer the requests already read, then end the connection (server shutdown).
 */
export function serveNdjson(socket: Socket, limits: Limits, handle: FrameHandler): () => void {
  return new NdjsonConnection(socket, limits, handle).drain;
}

/**
 * One NDJSON connection: `pump` frames the lines read and `dispatch`es them while there is room, `flush`
 * writes the answers in their turn, `control` reads control lines, `stop` ends the reading.
 */
class NdjsonConnection {
  private readonly controller = new AbortController();
  private readonly order: Slot[] = [];
  /** Bytes read from the socket and not yet framed (reading is paused while this is not empty). */
  private backlog: Buffer | undefined;
  /** The start of a line whose newline has not arrived yet. */
  private chunks: Buffer[] = [];
  private buffered = 0;
  private discarding = false; // inside a line that already exceeded the limit
  private inflight = 0;
  private ended = false; // the client half-closed
  private stopped = false; // no more lines are taken: drained, or a line missed its deadline
  private clientEnded = false;
  private pumpScheduled = false;
  private flushScheduled = false;
  private lineTimer: NodeJS.Timeout | undefined;
  /** An `unordered` control line was read: answers are written as they are ready, not in request order. */
  private unordered = false;

  constructor(
    private readonly socket: Socket,
    private readonly limits: Limits,
    private readonly handle: FrameHandler,
  ) {
    // Every pipelined request listens on this signal: up to maxPipelined at once.
    setMaxListeners(limits.maxPipelined + 16, this.controller.signal);
    socket.on("data", (chunk: Buffer) => {
      if (this.stopped) return;
      this.backlog = this.backlog === undefined ? chunk : Buffer.concat([this.backlog, chunk]);
      this.pump();
    });
    socket.on("drain", () => this.schedulePump());
    socket.on("end", () => {
      this.clientEnded = true;
      if (this.stopped) return this.flush();
      if (this.backlog === undefined) this.finishInput();
      // else: the backlog is framed first; pump() finishes the input when it is empty.
    });
    socket.on("close", () => {
      this.clearLineTimer();
      this.controller.abort(new AipError("AIP_ERR_CANCELLED", "Client closed the connection"));
    });
  }

  /** Stop reading, answer the requests already read, then end the connection. */
  readonly drain = (): void => {
    if (this.ended || this.stopped) return;
    this.stop();
    this.flush();
  };

  /**
   * Write the answers ready in order and end the connection when it is done. Deferred to the end of the
   * current tick (process.nextTick runs once the promise jobs have drained), so the answers of a
   * pipeline that complete together go out in one write: one system call, not one each.
   */
  private flush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    process.nextTick(this.flushNow);
  }

  private readonly flushNow = (): void => {
    this.flushScheduled = false;
    const { order, socket } = this;
    let out = "";
    if (this.unordered) {
      let kept = 0;
      for (const slot of order) {
        if (slot.text !== undefined) out += slot.text + "\n";
        else order[kept++] = slot;
      }
      order.length = kept;
    } else while (order.length > 0 && order[0]!.text !== undefined) out += order.shift()!.text + "\n";
    if (socket.destroyed) return;
    if (out !== "") socket.write(out);
    if ((this.ended || this.stopped) && order.length === 0 && this.inflight === 0 && socket.writable) {
      socket.end();
      if (this.stopped && !this.clientEnded) setTimeout(() => socket.destroy(), LINGER_MS).unref();
    }
  };

  /** Room for one more request: in-flight cap and queued-output cap (a client that does not read). */
  private hasRoom(): boolean {
    return this.inflight < this.limits.maxPipelined && this.socket.writableLength < this.limits.maxQueuedOutputBytes;
  }

  private answer(text: string): void {
    this.order.push({ text });
    this.flush();
  }

  /** A request's answer is ready: written in its turn (one promise reaction per request, no chain). */
  private settle(slot: Slot, text: string): void {
    try {
      slot.text = text;
      this.inflight--;
      this.flush();
      this.schedulePump();
    } catch {
      this.socket.destroy();
    }
  }

  /**
   * A control line (docs/aip-1.md, Control lines): `unordered` or `cancel`, never answered; one that
   * is not understood is answered AIP_ERR_INVALID_FIELD.
   */
  private control(line: Buffer): void {
    let value: unknown;
    try {
      value = JSON.parse(line.toString("utf8"));
    } catch {
      value = undefined;
    }
    const message = value as { control?: unknown; trace_id?: unknown } | undefined;
    if (message?.control === "unordered") {
      this.unordered = true;
      return;
    }
    if (message?.control === "cancel" && isValidTraceId(message.trace_id)) {
      cancelTrace(
        this.controller.signal,
        message.trace_id,
        () => new AipError("AIP_ERR_CANCELLED", "The client cancelled this request (a cancel control line)"),
      );
      return;
    }
    const err = new AipError(
      "AIP_ERR_INVALID_FIELD",
      'A control line is {"control":"unordered"} or {"control":"cancel","trace_id":"…"}',
      { extensions: { errors: [{ path: "control", message: "expected unordered, or cancel with a valid trace_id" }] } },
    );
    this.answer(JSON.stringify(errorResponse(err, newTraceId())));
  }

  private dispatch(line: Buffer): void {
    if (isBlank(line)) return;
    if (isControlLine(line)) return this.control(line);
    const slot: Slot = { text: undefined };
    this.order.push(slot);
    this.inflight++;
    this.handle(line, this.controller.signal, this.unordered).then(
      (text) => this.settle(slot, text),
      (err: unknown) => this.settle(slot, JSON.stringify(errorResponse(err, newTraceId()))),
    );
  }

  private tooLarge(): void {
    const err = new AipError(
      "AIP_ERR_PAYLOAD_TOO_LARGE",
      `NDJSON line exceeds the limit of ${this.limits.maxLineBytes} bytes`,
      {
        extensions: { limit: this.limits.maxLineBytes },
      },
    );
    this.answer(JSON.stringify(errorResponse(err, newTraceId())));
  }

  private readonly lineLate = (): void => {
    this.lineTimer = undefined;
    if (this.stopped || this.socket.destroyed) return;
    const err = new AipError(
      "AIP_ERR_INVALID_JSON",
      `NDJSON line did not arrive within ${this.limits.lineReceiveTimeoutMs} ms of its first byte`,
      {
        suggestion: "Send each request as one whole line; the connection is closed",
        extensions: { limit_ms: this.limits.lineReceiveTimeoutMs },
      },
    );
    this.stop();
    this.answer(JSON.stringify(errorResponse(err, newTraceId())));
  };

  private clearLineTimer(): void {
    clearTimeout(this.lineTimer);
    this.lineTimer = undefined;
  }

  /** Frame and dispatch lines from the backlog while there is room; the rest waits, reading paused. */
  private readonly pump = (): void => {
    this.pumpScheduled = false;
    const { socket, limits } = this;
    if (this.stopped || socket.destroyed) return;
    let taken = 0;
    while (this.backlog !== undefined) {
      if (!this.hasRoom() || taken >= limits.maxPipelined) break;
      const chunk: Buffer = this.backlog;
      const nl = chunk.indexOf(NEWLINE);
      if (nl === -1) {
        this.backlog = undefined;
        if (this.discarding) break;
        if (this.buffered + chunk.length > limits.maxLineBytes) {
          // Answer now, then skip the rest of this line: memory stays bounded by the limit.
          this.chunks = [];
          this.buffered = 0;
          this.discarding = true;
          this.tooLarge();
          break;
        }
        this.chunks.push(Buffer.from(chunk));
        this.buffered += chunk.length;
        break;
      }
      const piece = chunk.subarray(0, nl);
      this.backlog = nl + 1 < chunk.length ? chunk.subarray(nl + 1) : undefined;
      this.clearLineTimer();
      if (this.discarding) {
        this.discarding = false;
        continue;
      }
      if (this.buffered + piece.length + 1 > limits.maxLineBytes) this.tooLarge();
      else if (this.buffered + piece.length > 0) {
        this.dispatch(this.chunks.length === 0 ? piece : Buffer.concat([...this.chunks, piece]));
        taken++;
      }
      this.chunks = [];
      this.buffered = 0;
    }
    if (this.backlog !== undefined) {
      socket.pause();
      // The client is not the one holding its line up now: its deadline starts again when reading resumes.
      this.clearLineTimer();
      // Out of room: more is taken when an answer is written or read; out of turn: on the next one.
      if (this.hasRoom()) this.schedulePump();
      return;
    }
    if (this.clientEnded) {
      this.finishInput();
      return;
    }
    // Waiting on the client for the rest of a line: that is what the line deadline bounds.
    if ((this.buffered > 0 || this.discarding) && this.lineTimer === undefined)
      this.lineTimer = setTimeout(this.lineLate, limits.lineReceiveTimeoutMs);
    socket.resume();
  };

  private schedulePump(): void {
    if (this.pumpScheduled || this.backlog === undefined || this.stopped) return;
    this.pumpScheduled = true;
    setImmediate(this.pump);
  }

  private finishInput(): void {
    if (this.ended) return;
    this.ended = true;
    this.clearLineTimer();
    if (!this.discarding && this.buffered > 0) this.dispatch(Buffer.concat(this.chunks)); // last unterminated object
    this.chunks = [];
    this.buffered = 0;
    this.flush();
  }

  private stop(): void {
    this.stopped = true;
    this.clearLineTimer();
    this.socket.pause();
    this.backlog = undefined;
    this.chunks = [];
    this.buffered = 0;
  }
}
