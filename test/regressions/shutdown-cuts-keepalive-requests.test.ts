// Regression: on SIGTERM the server kept reading new requests on open keep-alive (HTTP) and NDJSON
// connections during the grace period, then tore the connections down, cutting off requests it had
// read (the fault suite lost ~140 of 2,200 requests across an orchestrator restart under 200 clients).
// Now, once closing: an HTTP answer carries Connection: close and ends its connection; an NDJSON
// connection stops reading, answers what it read, and ends.
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { successResponse } from "../../protocol/contract/envelope.js";
import { AipServer } from "../../protocol/transport/server.js";
import { tempDir } from "../helpers.js";

let server: AipServer | undefined;
let t: ReturnType<typeof tempDir> | undefined;
afterEach(async () => {
  await server?.close(100);
  t?.cleanup();
});

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

it("answers in-flight requests while closing, with Connection: close, and reads nothing new", async () => {
  t = tempDir();
  const release = gate();
  const started: string[] = [];
  server = await AipServer.listen({
    socketPath: join(t.dir, "s.sock"),
    invoke: async (v) => {
      const trace = (v as { trace_id: string }).trace_id;
      started.push(trace);
      await release.wait;
      return successResponse({}, trace);
    },
  });
  const open = (payload: string): Promise<{ data: () => string; ended: Promise<void>; write: (s: string) => void }> =>
    new Promise((resolve) => {
      const s = connect(server!.socketPath);
      let data = "";
      s.on("data", (c: Buffer) => (data += c.toString("utf8")));
      const ended = new Promise<void>((r) => s.once("end", () => r()));
      s.on("connect", () => {
        s.write(payload);
        resolve({ data: () => data, ended, write: (x) => s.write(x) });
      });
    });
  const req = (trace: string): string =>
    JSON.stringify({ action: "echo", context: {}, constraints: {}, trace_id: trace });
  const http = await open(`POST /v1/invoke HTTP/1.1\r\nContent-Length: ${req("h1").length}\r\n\r\n${req("h1")}`);
  const nd = await open(req("n1") + "\n");
  while (started.length < 2) await new Promise((r) => setImmediate(r));
  const closing = server.close(5000);
  nd.write(req("n2") + "\n"); // after closing began: not read
  release.open();
  await Promise.all([http.ended, nd.ended, closing]);
  expect(http.data()).toMatch(/^HTTP\/1\.1 200 /);
  expect(http.data().toLowerCase()).toContain("connection: close");
  expect(http.data()).toContain('"trace_id":"h1"');
  const lines = nd.data().trim().split("\n");
  expect(lines.map((l) => JSON.parse(l).trace_id)).toEqual(["n1"]);
  expect(started.sort()).toEqual(["h1", "n1"]);
});
