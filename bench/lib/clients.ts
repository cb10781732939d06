/** Benchmark clients: HTTP keep-alive (undici), NDJSON connections, and one fresh connection per request. */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect, type Socket } from "node:net";
import { Pool } from "undici";

/** Sends one request body and resolves true on an AIP-1 success, false on an AIP-1 error; rejects on transport failure. */
export interface Client {
  send(body: string): Promise<boolean>;
  close(): Promise<void>;
}

const isSuccess = (text: string): boolean => (JSON.parse(text) as { status?: string }).status === "success";

/** HTTP/1.1 keep-alive over a Unix socket, up to `connections` open connections. */
export function httpKeepAlive(socketPath: string, connections: number): Client {
  const pool = new Pool("http://aip", { socketPath, connections, pipelining: 1, keepAliveTimeout: 30_000 });
  return {
    async send(body) {
      const res = await pool.request({
        path: "/v1/invoke",
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      return isSuccess(await res.body.text());
    },
    close: () => pool.destroy(),
  };
}

/** One NDJSON connection: one request line out, one answer line back. */
class NdjsonConnection {
  private readonly socket: Socket;
  private waiting: { resolve: (line: string) => void; reject: (err: Error) => void }[] = [];
  private rest = "";
  readonly ready: Promise<void>;

  constructor(socketPath: string) {
    this.socket = connect(socketPath);
    this.socket.setEncoding("utf8");
    this.ready = new Promise((resolve, reject) => {
      this.socket.once("connect", resolve);
      this.socket.once("error", reject);
    });
    this.socket.on("error", () => undefined);
    this.socket.on("close", () => {
      for (const w of this.waiting.splice(0)) w.reject(new Error("NDJSON connection closed"));
    });
    this.socket.on("data", (chunk: string) => {
      this.rest += chunk;
      let nl;
      while ((nl = this.rest.indexOf("\n")) !== -1) {
        const line = this.rest.slice(0, nl);
        this.rest = this.rest.slice(nl + 1);
        this.waiting.shift()?.resolve(line);
      }
    });
  }

  send(body: string): Promise<string> {
    return new Promise((resolve, reject) => {
      if (this.socket.destroyed) return reject(new Error("NDJSON connection closed"));
      this.waiting.push({ resolve, reject });
      this.socket.write(body + "\n");
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

/**
 * NDJSON over persistent connections, opened as needed; each carries one request at a time
 * (the closed-loop worker that uses it waits for the answer before sending the next).
 */
export function ndjsonConnections(socketPath: string): Client {
  const idle: NdjsonConnection[] = [];
  const all: NdjsonConnection[] = [];
  return {
    async send(body) {
      let conn = idle.pop();
      if (!conn) {
        conn = new NdjsonConnection(socketPath);
        all.push(conn);
        await conn.ready;
      }
      const line = await conn.send(body);
      idle.push(conn);
      return isSuccess(line);
    },
    async close() {
      for (const c of all) c.close();
    },
  };
}

export type FreshTarget =
  { kind: "unix"; socketPath: string } | { kind: "tcp"; port: number } | { kind: "tls"; port: number; ca: string };

/** A new connection (and, for TLS, a full handshake) for every request, like an IDE plugin that does not pool. */
export function freshConnection(target: FreshTarget): Client {
  return {
    send(body) {
      return new Promise((resolve, reject) => {
        const headers = {
          host: "aip",
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          connection: "close",
        };
        const common = { method: "POST", path: "/v1/invoke", headers, agent: false as const };
        const onResponse = (res: import("node:http").IncomingMessage): void => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            try {
              resolve(isSuccess(Buffer.concat(chunks).toString("utf8")));
            } catch (err) {
              reject(err as Error);
            }
          });
          res.on("error", reject);
        };
        const req =
          target.kind === "unix"
            ? httpRequest({ ...common, socketPath: target.socketPath }, onResponse)
            : target.kind === "tcp"
              ? httpRequest({ ...common, host: "127.0.0.1", port: target.port }, onResponse)
              : httpsRequest(
                  { ...common, host: "127.0.0.1", port: target.port, ca: target.ca, servername: "localhost" },
                  onResponse,
                );
        req.on("error", reject);
        req.end(body);
      });
    },
    close: async () => undefined,
  };
}
