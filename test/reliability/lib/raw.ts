/** Raw connections for fuzzing: write bytes, half-close, read HTTP responses until the server closes. */
import { connect } from "node:net";
import { ResponseSchema } from "../../../protocol/contract/schemas.js";

export interface RawHttpResponse {
  status: number;
  body: string;
}

export interface RawHttpResult {
  responses: RawHttpResponse[];
  /** The server closed the connection (rather than our timeout ending it). */
  closed: boolean;
}

/** Split HTTP/1.1 responses that carry Content-Length (all of ours do). */
export function parseResponses(data: Buffer): RawHttpResponse[] {
  const out: RawHttpResponse[] = [];
  let at = 0;
  while (at < data.length) {
    const headEnd = data.indexOf("\r\n\r\n", at);
    if (headEnd === -1) break;
    const head = data.subarray(at, headEnd).toString("latin1");
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
    if (!Number.isFinite(length)) {
      out.push({ status, body: data.subarray(headEnd + 4).toString("utf8") });
      break;
    }
    out.push({ status, body: data.subarray(headEnd + 4, headEnd + 4 + length).toString("utf8") });
    at = headEnd + 4 + length;
  }
  return out;
}

/**
 * Send `payload` on a new connection and collect what comes back until the server closes, `done(data)`
 * says enough, or `timeoutMs`. With `end`, half-close after writing (HTTP servers then drop pipelined
 * requests not yet answered, as Node's does: use `end: false` and `done` to wait for answers).
 */
export function rawExchange(
  socketPath: string,
  payload: Buffer,
  timeoutMs: number,
  options: { end?: boolean; done?: (data: Buffer) => boolean } = {},
): Promise<{ data: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ data: Buffer.concat(chunks), closed });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on("data", (c: Buffer) => {
      chunks.push(c);
      if (options.done?.(Buffer.concat(chunks))) finish(true);
    });
    socket.on("error", () => undefined);
    socket.on("close", () => finish(true));
    socket.on("connect", () => ((options.end ?? true) ? socket.end(payload) : socket.write(payload)));
  });
}

/** Bytes in, HTTP responses out. `expect`: keep the connection open until that many responses arrived. */
export async function rawHttp(
  socketPath: string,
  payload: Buffer,
  timeoutMs: number,
  expect?: number,
): Promise<RawHttpResult> {
  const { data, closed } = await rawExchange(
    socketPath,
    payload,
    timeoutMs,
    expect === undefined ? {} : { end: false, done: (d) => parseResponses(d).length >= expect },
  );
  return { responses: parseResponses(data), closed };
}

/** Whether `text` is one valid AIP-1 response envelope. */
export function isEnvelope(text: string): boolean {
  try {
    return ResponseSchema.safeParse(JSON.parse(text)).success;
  } catch {
    return false;
  }
}

/** An HTTP request for /v1/invoke carrying `body` with a correct Content-Length. */
export function httpInvoke(body: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      `POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    ),
    body,
  ]);
}
