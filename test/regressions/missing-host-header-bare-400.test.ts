// Regression: an HTTP/1.1 request without a Host header (common from raw-socket clients; a Unix
// socket has no host) got Node's bare "400 Bad Request" with an empty body instead of being served
// (found by the fuzz suite's bogus-HTTP inputs).
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { successResponse } from "../../protocol/contract/envelope.js";
import { AipServer } from "../../protocol/transport/server.js";
import { tempDir } from "../helpers.js";
import { parseResponses } from "../reliability/lib/raw.js";

let server: AipServer | undefined;
let t: ReturnType<typeof tempDir> | undefined;
afterEach(async () => {
  await server?.close(100);
  t?.cleanup();
});

function exchange(socketPath: string, payload: string, expect: number): Promise<ReturnType<typeof parseResponses>> {
  return new Promise((resolve) => {
    const s = connect(socketPath);
    let data = Buffer.alloc(0);
    s.on("data", (c: Buffer) => {
      data = Buffer.concat([data, c]);
      if (parseResponses(data).length >= expect) s.destroy();
    });
    s.on("close", () => resolve(parseResponses(data)));
    s.on("connect", () => s.write(payload));
  });
}

it("serves HTTP/1.1 requests that carry no Host header, and answers unknown routes with an envelope", async () => {
  t = tempDir();
  server = await AipServer.listen({
    socketPath: join(t.dir, "s.sock"),
    invoke: async () => successResponse({ ok: true }, "no-host-1"),
  });
  const body = '{"action":"echo","context":{},"constraints":{}}';
  const [invoke, unknown] = await exchange(
    server.socketPath,
    `POST /v1/invoke HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n${body}GET /nope HTTP/1.1\r\n\r\n`,
    2,
  );
  expect(invoke).toMatchObject({ status: 200 });
  expect(JSON.parse(invoke!.body)).toMatchObject({ status: "success", trace_id: "no-host-1" });
  expect(unknown).toMatchObject({ status: 404 });
  expect(JSON.parse(unknown!.body).error.type).toBe("AIP_ERR_NO_ROUTE");
});
