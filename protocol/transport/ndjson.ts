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
  const controller = new AbortController();
  // Every pipelined request listens on this signal: up to maxPipelined at once.
  setMaxListeners(limits.maxPipelined + 16, controller.signal);
  const order: Slot[] = [];
  /** Bytes read from the socket and not yet framed (reading is paused while this is not empty). */
  let backlog: Buffer | undefined;
  /** The start of a line whose newline has not arrived yet. */
  let chunks: Buffer[] = [];
  let buffered = 0;
  let discarding = false; // inside a line that already exceeded the limit
  let inflight = 0;
  let ended = false; // the client half-closed
  let stopped = false; // no more lines are taken: drained, or a line missed its deadline
  let clientEnded = false;
  let pumpScheduled = false;
  let lineTimer: NodeJS.Timeout | undefined;
  /** An `unordered` control line was read: answers are written as they are ready, not in request order. */
  let unordered = false;

  /**
   * Write the answers ready in order and end the connection when it is done. Deferred to the end of the
   * current tick (process.nextTick runs once the promise jobs have drained), so the answers of a
   * pipeline that complete together go out in one write: one system call, not one each.
   */
  let flushScheduled = false;
  const flush = (): void => {
    if (flushScheduled) return;
    flushScheduled = true;
    process.nextTick(flushNow);
  };
  const flushNow = (): void => {
    flushScheduled = false;
    let out = "";
    if (unordered) {
      let kept = 0;
      for (const slot of order) {
        if (slot.text !== undefined) out += slot.text + "\n";
        else order[kept++] = slot;
      }
      order.length = kept;
    } else while (order.length > 0 && order[0]!.text !== undefined) out += order.shift()!.text + "\n";
    if (socket.destroyed) return;
    if (out !== "") socket.write(out);
    if ((ended || stopped) && order.length === 0 && inflight === 0 && socket.writable) {
      socket.end();
      if (stopped && !clientEnded) setTimeout(() => socket.destroy(), LINGER_MS).unref();
    }
  };

  /** Room for one more request: in-flight cap and queued-output cap (a client that does not read). */
  const hasRoom = (): boolean => inflight < limits.maxPipelined && socket.writableLength < limits.maxQueuedOutputBytes;

  const answer = (text: string): void => {
    order.push({ text });
    flush();
  };

  /** A request's answer is ready: written in its turn (one promise reaction per request, no chain). */
  const settle = (slot: Slot, text: string): void => {
    try {
      slot.text = text;
      inflight--;
      flush();
      schedulePump();
    } catch {
      socket.destroy();
    }
  };

  /**
   * A control line (docs/aip-1.md, Control lines): `unordered` or `cancel`, never answered; one that
   * is not understood is answered AIP_ERR_INVALID_FIELD.
   */
  const control = (line: Buffer): void => {
    let value: unknown;
    try {
      value = JSON.parse(line.toString("utf8"));
    } catch {
      value = undefined;
    }
    const message = value as { control?: unknown; trace_id?: unknown } | undefined;
    if (message?.control === "unordered") {
      unordered = true;
      return;
    }
    if (message?.control === "cancel" && isValidTraceId(message.trace_id)) {
      cancelTrace(
        controller.signal,
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
    answer(JSON.stringify(errorResponse(err, newTraceId())));
  };

  const dispatch = (line: Buffer): void => {
    if (isBlank(line)) return;
    if (isControlLine(line)) return control(line);
    const slot: Slot = { text: undefined };
    order.push(slot);
    inflight++;
    handle(line, controller.signal, unordered).then(
      (text) => settle(slot, text),
      (err: unknown) => settle(slot, JSON.stringify(errorResponse(err, newTraceId()))),
    );
  };

  const tooLarge = (): void => {
    const err = new AipError(
      "AIP_ERR_PAYLOAD_TOO_LARGE",
      `NDJSON line exceeds the limit of ${limits.maxLineBytes} bytes`,
      {
        extensions: { limit: limits.maxLineBytes },
      },
    );
    answer(JSON.stringify(errorResponse(err, newTraceId())));
  };

  const lineLate = (): void => {
    lineTimer = undefined;
    if (stopped || socket.destroyed) return;
    const err = new AipError(
      "AIP_ERR_INVALID_JSON",
      `NDJSON line did not arrive within ${limits.lineReceiveTimeoutMs} ms of its first byte`,
      {
        suggestion: "Send each request as one whole line; the connection is closed",
        extensions: { limit_ms: limits.lineReceiveTimeoutMs },
      },
    );
    stop();
    answer(JSON.stringify(errorResponse(err, newTraceId())));
  };

  const clearLineTimer = (): void => {
    clearTimeout(lineTimer);
    lineTimer = undefined;
  };

  /** Frame and dispatch lines from the backlog while there is room; the rest waits, reading paused. */
  const pump = (): void => {
    pumpScheduled = false;
    if (stopped || socket.destroyed) return;
    let taken = 0;
    while (backlog !== undefined) {
      if (!hasRoom() || taken >= limits.maxPipelined) break;
      const chunk: Buffer = backlog;
      const nl = chunk.indexOf(NEWLINE);
      if (nl === -1) {
        backlog = undefined;
        if (discarding) break;
        if (buffered + chunk.length > limits.maxLineBytes) {
          // Answer now, then skip the rest of this line: memory stays bounded by the limit.
          chunks = [];
          buffered = 0;
          discarding = true;
          tooLarge();
          break;
        }
        chunks.push(Buffer.from(chunk));
        buffered += chunk.length;
        break;
      }
      const piece = chunk.subarray(0, nl);
      backlog = nl + 1 < chunk.length ? chunk.subarray(nl + 1) : undefined;
      clearLineTimer();
      if (discarding) {
        discarding = false;
        continue;
      }
      if (buffered + piece.length + 1 > limits.maxLineBytes) tooLarge();
      else if (buffered + piece.length > 0) {
        dispatch(chunks.length === 0 ? piece : Buffer.concat([...chunks, piece]));
        taken++;
      }
      chunks = [];
      buffered = 0;
    }
    if (backlog !== undefined) {
      socket.pause();
      // The client is not the one holding its line up now: its deadline starts again when reading resumes.
      clearLineTimer();
      // Out of room: more is taken when an answer is written or read; out of turn: on the next one.
      if (hasRoom()) schedulePump();
      return;
    }
    if (clientEnded) {
      finishInput();
      return;
    }
    // Waiting on the client for the rest of a line: that is what the line deadline bounds.
    if ((buffered > 0 || discarding) && lineTimer === undefined)
      lineTimer = setTimeout(lineLate, limits.lineReceiveTimeoutMs);
    socket.resume();
  };

  const schedulePump = (): void => {
    if (pumpScheduled || backlog === undefined || stopped) return;
    pumpScheduled = true;
    setImmediate(pump);
  };

  const finishInput = (): void => {
    if (ended) return;
    ended = true;
    clearLineTimer();
    if (!discarding && buffered > 0) dispatch(Buffer.concat(chunks)); // last unterminated object
    chunks = [];
    buffered = 0;
    flush();
  };

  const stop = (): void => {
    stopped = true;
    clearLineTimer();
    socket.pause();
    backlog = undefined;
    chunks = [];
    buffered = 0;
  };

  socket.on("data", (chunk: Buffer) => {
    if (stopped) return;
    backlog = backlog === undefined ? chunk : Buffer.concat([backlog, chunk]);
    pump();
  });

  socket.on("drain", () => schedulePump());

  socket.on("end", () => {
    clientEnded = true;
    if (stopped) return flush();
    if (backlog === undefined) finishInput();
    // else: the backlog is framed first; pump() finishes the input when it is empty.
  });

  socket.on("close", () => {
    clearLineTimer();
    controller.abort(new AipError("AIP_ERR_CANCELLED", "Client closed the connection"));
  });

  return () => {
    if (ended || stopped) return;
    stop();
    flush();
  };
}
