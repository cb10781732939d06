/**
 * The Unix-socket HTTP client's timeout (protocol/transport/client.ts), as the orchestrator's health probes use it: an
 * answer that arrived while this process was starved past the timeout is read, not called a timeout.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { httpRequest } from "../../../protocol/transport/client.js";
import { tempDir } from "../../helpers.js";

/** A server in another process: on each request it says "got" on stdout, then answers after `delayMs`. */
const SERVER = `
const http = require("node:http");
const [socketPath, delayMs] = process.argv.slice(1);
http.createServer((req, res) => {
  process.stdout.write("got\\n");
  setTimeout(() => res.end(JSON.stringify({ status: "ok", path: req.url })), Number(delayMs));
}).listen(socketPath, () => process.stdout.write("listening\\n"));
`;

let child: ChildProcess | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  child?.kill("SIGKILL");
  cleanup?.();
  child = cleanup = undefined;
});

/** Start the server; resolve with a function that waits for its next stdout line equal to `line`. */
async function startServer(socketPath: string, delayMs: number): Promise<(line: string) => Promise<void>> {
  const c = spawn(process.execPath, ["-e", SERVER, socketPath, String(delayMs)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  child = c;
  let buffered = "";
  const waiters: { line: string; resolve: () => void }[] = [];
  c.stdout.setEncoding("utf8").on("data", (d: string) => {
    buffered += d;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const l = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const i = waiters.findIndex((w) => w.line === l);
      if (i >= 0) waiters.splice(i, 1)[0]!.resolve();
    }
  });
  const next = (line: string): Promise<void> => new Promise((resolve) => waiters.push({ line, resolve }));
  await next("listening");
  return next;
}

/** Hold this process's event loop for `ms` (a starved orchestrator). */
function block(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

it("an answer that arrived while this process was blocked past the timeout is read, not a timeout", async () => {
  const t = tempDir();
  cleanup = t.cleanup;
  const socketPath = join(t.dir, "s.sock");
  const next = await startServer(socketPath, 50);
  const got = next("got");
  const answer = httpRequest(socketPath, { method: "GET", path: "/healthz", timeoutMs: 200, agent: false });
  await got;
  // The server answers 50 ms after it got the request; this process sees nothing for 400 ms, twice its timeout.
  block(400);
  const res = await answer;
  expect(res.status).toBe(200);
  expect(JSON.parse(res.body)).toEqual({ status: "ok", path: "/healthz" });
});

it("a server that does not answer in time still times out", async () => {
  const t = tempDir();
  cleanup = t.cleanup;
  const socketPath = join(t.dir, "s.sock");
  await startServer(socketPath, 5_000);
  // The server would answer after 5 s: a rejection naming the 150 ms timeout is the timer's, not the answer's.
  await expect(
    httpRequest(socketPath, { method: "GET", path: "/healthz", timeoutMs: 150, agent: false }),
  ).rejects.toThrow("HTTP request timed out after 150 ms");
});
