// Regression: on one HTTP connection, a complete request followed by malformed bytes got only the
// 400 for the bad bytes; the complete request's answer was cut off by the close (found by the fuzz
// suite, "both framings mixed on one connection").
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { successResponse } from "../../protocol/contract/envelope.js";
import { ResponseSchema } from "../../protocol/contract/schemas.js";
import { AipServer } from "../../protocol/transport/server.js";
import { tempDir } from "../helpers.js";
import { parseResponses } from "../reliability/lib/raw.js";

let server: AipServer | undefined;
let t: ReturnType<typeof tempDir> | undefined;
afterEach(async () => {
  await server?.close(100);
  t?.cleanup();
});

it("answers a pipelined complete request before the 400 for the malformed bytes after it", async () => {
  t = tempDir();
  server = await AipServer.listen({
    socketPath: join(t.dir, "s.sock"),
    invoke: async (v) => successResponse({ ok: true }, (v as { trace_id: string }).trace_id),
  });
  const body = '{"action":"echo","context":{},"constraints":{},"trace_id":"kept-1"}';
  const payload = `POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Length: ${body.length}\r\n\r\n${body}{not http\n`;
  const text = await new Promise<string>((resolve) => {
    const s = connect(server!.socketPath);
    let data = "";
    s.on("data", (c: Buffer) => (data += c.toString("utf8")));
    s.on("close", () => resolve(data));
    s.on("connect", () => s.write(payload));
  });
  const responses = parseResponses(Buffer.from(text));
  expect(responses.map((r) => r.status)).toEqual([200, 400]);
  const bodies = responses.map((r) => JSON.parse(r.body));
  expect(bodies.every((b) => ResponseSchema.safeParse(b).success)).toBe(true);
  expect(bodies[0].trace_id).toBe("kept-1");
  expect(bodies[1].error.type).toBe("AIP_ERR_INVALID_JSON");
});
