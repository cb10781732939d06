/** Plain Unix-socket clients (HTTP and NDJSON): used by the orchestrator's probes, the CLI, the conformance kit, tests and benchmarks. */
import { request as httpRequestRaw, Agent } from "node:http";
import { connect } from "node:net";

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface HttpOptions {
  method?: string;
  path?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  timeoutMs?: number;
  /** An agent for keep-alive; `false`: a fresh connection, closed after the answer. Default: Node's global agent. */
  agent?: Agent | false;
}

/** The request got no answer within its timeout (as opposed to an answer, or a refused connection). */
export class RequestTimeoutError extends Error {}

/** One HTTP request over a Unix socket. Rejects on connection errors and on timeout (RequestTimeoutError). */
export function httpRequest(socketPath: string, options: HttpOptions = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const body = options.body;
    const req = httpRequestRaw(
      {
        socketPath,
        method: options.method ?? (body !== undefined ? "POST" : "GET"),
        path: options.path ?? "/v1/invoke",
        headers: {
          host: "aip",
          ...(body !== undefined
            ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
            : {}),
          ...options.headers,
        },
        ...(options.agent !== undefined ? { agent: options.agent } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          settle();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", reject);
      },
    );
    let settled = false;
    const settle = (): void => {
      settled = true;
    };
    req.setTimeout(options.timeoutMs ?? 30_000, () =>
      // The verdict waits one turn of the event loop. After this process was starved past the timeout (a
      // loaded orchestrator), timers run before the poll phase that reads an answer already waiting in the
      // socket: deciding at once would call a prompt agent unresponsive (docs/operations.md, "Orchestrator").
      setImmediate(() => {
        if (!settled)
          req.destroy(new RequestTimeoutError(`HTTP request timed out after ${options.timeoutMs ?? 30_000} ms`));
      }),
    );
    req.on("error", (err) => {
      settle();
      reject(err);
    });
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/** POST a JSON request to /v1/invoke and parse the envelope. */
export async function invokeHttp(
  socketPath: string,
  request: unknown,
  timeoutMs?: number,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await httpRequest(socketPath, { body: JSON.stringify(request), ...(timeoutMs ? { timeoutMs } : {}) });
  return { status: res.status, json: JSON.parse(res.body) as Record<string, unknown> };
}

export interface NdjsonOptions {
  /** Half-close after writing (so an unterminated last object is answered). Default true. */
  end?: boolean;
  /** Number of response lines to wait for (default: until the server closes). */
  expect?: number;
  timeoutMs?: number;
}

/** Write raw NDJSON bytes on one connection and collect the response lines. */
export function ndjsonExchange(
  socketPath: string,
  data: string | Buffer,
  options: NdjsonOptions = {},
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    const lines: string[] = [];
    let rest = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`NDJSON exchange timed out with ${lines.length} line(s) received`));
    }, options.timeoutMs ?? 30_000);
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(lines);
    };
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      rest += chunk;
      let nl;
      while ((nl = rest.indexOf("\n")) !== -1) {
        lines.push(rest.slice(0, nl));
        rest = rest.slice(nl + 1);
        if (options.expect !== undefined && lines.length >= options.expect) return done();
      }
    });
    socket.on("end", () => {
      if (rest.length > 0) lines.push(rest);
      done();
    });
    socket.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on("connect", () => {
      if (options.end === false) socket.write(data);
      else socket.end(data);
    });
  });
}

/** Resolve once `socketPath` accepts a connection; reject after `timeoutMs`. Polls with backoff. */
export async function waitForSocket(socketPath: string, timeoutMs = 10_000, alive?: () => boolean): Promise<void> {
  const until = Date.now() + timeoutMs;
  let delay = 5;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(socketPath);
      s.once("connect", () => {
        s.destroy();
        resolve(true);
      });
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    if (alive && !alive()) throw new Error(`Process exited before ${socketPath} accepted connections`);
    if (Date.now() > until) throw new Error(`${socketPath} did not accept connections within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 100);
  }
}
