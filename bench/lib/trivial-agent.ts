#!/usr/bin/env node
/**
 * `node trivial-agent.js SOCKET`: an AIP-1 agent that does no work, for measuring what a proxy in front
 * of it costs. It answers POST /v1/invoke (HTTP/1.1 keep-alive) and NDJSON lines on the same socket as
 * agent "dummy" 1.0.0 (manifests/dummy.json), echoing the trace id, and GET /healthz. It trusts its
 * input: a benchmark fixture, never an agent to deploy.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer, type Socket } from "node:net";
import { rmSync } from "node:fs";

const socketPath = process.argv[2];
if (!socketPath) {
  console.error("usage: trivial-agent SOCKET");
  process.exit(2);
}

const TRACE = /"trace_id":"([A-Za-z0-9._:-]{1,128})"/;
const answer = (body: string): string => {
  const trace = TRACE.exec(body)?.[1] ?? "t0";
  return `{"status":"success","payload":{"echo":"echo"},"trace_id":"${trace}","agent":"dummy","version":"1.0.0"}`;
};

const http = createHttpServer({ keepAliveTimeout: 60_000 }, (req: IncomingMessage, res: ServerResponse) => {
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"status":"ok","agent":"dummy","version":"1.0.0"}');
    return;
  }
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (c: string) => (body += c));
  req.on("end", () => {
    const out = answer(body);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(out) });
    res.end(out);
  });
});

/** The first byte tells the framing apart: `{` is an NDJSON line, anything else HTTP. */
const server = createServer((socket: Socket) => {
  socket.once("data", (first: Buffer) => {
    if (first[0] !== 0x7b) {
      socket.unshift(first);
      http.emit("connection", socket);
      return;
    }
    let rest = "";
    const onData = (chunk: Buffer): void => {
      rest += chunk.toString("utf8");
      let nl;
      let out = "";
      while ((nl = rest.indexOf("\n")) !== -1) {
        const line = rest.slice(0, nl);
        // Control lines (docs/aip-1.md): answers are written at once, so `unordered` changes nothing, and
        // there is no work to cancel.
        if (!line.startsWith('{"control"')) out += answer(line) + "\n";
        rest = rest.slice(nl + 1);
      }
      if (out) socket.write(out);
    };
    socket.on("data", onData);
    socket.on("error", () => undefined);
    onData(first);
  });
});
rmSync(socketPath, { force: true });
server.listen(socketPath);
process.on("SIGTERM", () => process.exit(0));
