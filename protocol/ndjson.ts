/** NDJSON framing: one request a line, answers written in request order, backpressure both ways. */
import { setMaxListeners } from "node:events";
import type { Socket } from "node:net";
import { AipError } from "./errors.js";
import { errorResponse } from "./envelope.js";
import type { Limits } from "./limits.js";
import { newTraceId } from "./trace.js";

/** Answers one framed request (raw bytes, without the newline) with a serialised response. */
export type FrameHandler = (bytes: Buffer, signal: AbortSignal) => Promise<string>;

interface Slot {
  text: string | undefined;
}

const NEWLINE = 0x0a;

function isBlank(buf: Buffer): boolean {
  for (const b of buf) if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a) return false;
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
  let chunks: Buffer[] = [];
  let buffered = 0;
  let discarding = false; // inside a line that already exceeded the limit
  let inflight = 0;
  let ended = false;
  let waitingDrain = false;

  const flush = (): void => {
    while (order.length > 0 && order[0]!.text !== undefined) {
      const slot = order.shift()!;
      if (socket.destroyed) return;
      if (!socket.write(slot.text + "\n") && !waitingDrain) {
        waitingDrain = true;
        socket.pause();
        socket.once("drain", () => {
          waitingDrain = false;
          maybeResume();
        });
      }
    }
    if (ended && order.length === 0 && !socket.destroyed) socket.end();
  };

  const maybeResume = (): void => {
    if (!waitingDrain && inflight < limits.maxPipelined && !ended && !socket.destroyed) socket.resume();
  };

  const answer = (text: string): void => {
    order.push({ text });
    flush();
  };

  const dispatch = (line: Buffer): void => {
    if (isBlank(line)) return;
    const slot: Slot = { text: undefined };
    order.push(slot);
    inflight++;
    if (inflight >= limits.maxPipelined) socket.pause();
    handle(line, controller.signal)
      .catch((err: unknown) => JSON.stringify(errorResponse(err, newTraceId())))
      .then((text) => {
        slot.text = text;
        inflight--;
        flush();
        maybeResume();
      })
      .catch(() => socket.destroy());
  };

  const tooLarge = (): void => {
    const err = new AipError("AIP_ERR_PAYLOAD_TOO_LARGE", `NDJSON line exceeds the limit of ${limits.maxLineBytes} bytes`, {
      extensions: { limit: limits.maxLineBytes },
    });
    answer(JSON.stringify(errorResponse(err, newTraceId())));
  };

  socket.on("data", (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (discarding) {
        discarding = false;
        continue;
      }
      if (buffered + piece.length + 1 > limits.maxLineBytes) {
        tooLarge();
      } else {
        dispatch(chunks.length === 0 ? piece : Buffer.concat([...chunks, piece]));
      }
      chunks = [];
      buffered = 0;
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0 || discarding) return;
    if (buffered + rest.length > limits.maxLineBytes) {
      // Answer now, then skip the rest of this line: memory stays bounded by the limit.
      chunks = [];
      buffered = 0;
      discarding = true;
      tooLarge();
      return;
    }
    chunks.push(Buffer.from(rest));
    buffered += rest.length;
  });

  socket.on("end", () => {
    ended = true;
    if (!discarding && buffered > 0) dispatch(Buffer.concat(chunks)); // last unterminated object
    chunks = [];
    buffered = 0;
    flush();
  });

  socket.on("close", () => controller.abort(new AipError("AIP_ERR_CANCELLED", "Client closed the connection")));

  return () => {
    if (ended) return;
    ended = true;
    socket.pause();
    chunks = [];
    buffered = 0;
    flush();
  };
}
