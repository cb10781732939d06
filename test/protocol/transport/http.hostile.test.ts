/**
 * Bad and unfinished HTTP bodies, raw bytes on a real socket: each gets its AIP-1 answer at once (400)
 * or at requestReceiveTimeoutMs (408), and the connection is closed; none is held until the idle timeout.
 */
import { connect } from "node:net";
import { beforeEach, describe, expect, it } from "vitest";
import { successResponse } from "../../../protocol/contract/envelope.js";
import { isEnvelope, parseResponses, rawExchange } from "../../reliability/lib/raw.js";
import { serverFixture } from "../lib/servers.js";

let invoked = 0;

beforeEach(() => {
  invoked = 0;
});

/** The idle timeout is far beyond the test's wait: an answer can only come from the fix, not from it. */
const { start } = serverFixture(() => ({
  invoke: async (req) => {
    invoked++;
    return successResponse({ echo: req }, "t");
  },
  limits: { idleTimeoutMs: 120_000, headersTimeoutMs: 400, requestReceiveTimeoutMs: 400 },
}));

const HEAD = "POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Type: application/json\r\n";
const chunked = (body: string): Buffer => Buffer.from(`${HEAD}Transfer-Encoding: chunked\r\n\r\n${body}`);

/** Write, keep the connection open (the client does not half-close), collect until the server closes. */
async function exchange(
  socketPath: string,
  payload: Buffer,
): Promise<{ status: number[]; bodies: string[]; closed: boolean }> {
  const { data, closed } = await rawExchange(socketPath, payload, 10_000, { end: false });
  const responses = parseResponses(data);
  return { status: responses.map((r) => r.status), bodies: responses.map((r) => r.body), closed };
}

describe("bad HTTP bodies are answered at once", () => {
  for (const [name, body] of [
    ["chunk size zz", "zz\r\n{}\r\n0\r\n\r\n"],
    ["chunk size -1", "-1\r\n{}\r\n0\r\n\r\n"],
    ["chunk size 2^72", "1000000000000000000\r\n{}\r\n0\r\n\r\n"],
    ["LF-only chunked body", "2\n{}\n0\n\n"],
  ] as const) {
    it(`${name}: 400 AIP_ERR_INVALID_JSON, then the connection is closed`, async () => {
      const s = await start();
      const r = await exchange(s.socketPath, chunked(body));
      expect(r.closed).toBe(true);
      expect(r.status).toEqual([400]);
      expect(isEnvelope(r.bodies[0]!)).toBe(true);
      expect(JSON.parse(r.bodies[0]!).error.type).toBe("AIP_ERR_INVALID_JSON");
      expect(JSON.parse(r.bodies[0]!).error.detail).toMatch(/Malformed HTTP request \(HPE_/);
      expect(invoked).toBe(0);
    });
  }

  it("a good request pipelined before a bad chunk is answered first, in order", async () => {
    const s = await start();
    const good = Buffer.from(`${HEAD}Content-Length: 2\r\n\r\n{}`);
    const r = await exchange(s.socketPath, Buffer.concat([good, chunked("zz\r\n")]));
    expect(r.status).toEqual([200, 400]);
    expect(JSON.parse(r.bodies[0]!).payload).toEqual({ echo: {} });
    expect(r.closed).toBe(true);
  });
});

describe("unfinished HTTP bodies get 408 at requestReceiveTimeoutMs", () => {
  it("a body shorter than its Content-Length", async () => {
    const s = await start();
    const r = await exchange(s.socketPath, Buffer.from(`${HEAD}Content-Length: 100\r\n\r\n{"action":`));
    expect(r.status).toEqual([408]);
    expect(JSON.parse(r.bodies[0]!).error).toMatchObject({
      type: "AIP_ERR_INVALID_JSON",
      detail: "HTTP request did not arrive in time",
    });
    expect(r.closed).toBe(true);
    expect(invoked).toBe(0);
  });

  it("an unfinished chunked body", async () => {
    const s = await start();
    const r = await exchange(s.socketPath, chunked("2\r\n{}\r\n"));
    expect(r.status).toEqual([408]);
    expect(r.closed).toBe(true);
  });

  it("a body trickled a byte at a time is cut off, not answered when it finally completes", async () => {
    const s = await start();
    const body = JSON.stringify({ action: "echo", context: { pad: "x".repeat(200) }, constraints: {} });
    const reply = await new Promise<string>((resolve) => {
      const c = connect(s.socketPath, () => c.write(`${HEAD}Content-Length: ${body.length}\r\n\r\n`));
      let sent = 0;
      // 200 bytes at one per 20 ms: 4 s, ten times the receive deadline.
      const trickle = setInterval(() => {
        if (sent < body.length && c.writable) c.write(body[sent++]!);
      }, 20);
      let out = "";
      c.on("data", (d) => (out += d.toString()));
      c.on("error", () => undefined);
      c.on("close", () => {
        clearInterval(trickle);
        resolve(`${out}\nsent=${sent}`);
      });
    });
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    expect(Number(/sent=(\d+)/.exec(reply)![1])).toBeLessThan(body.length);
    expect(invoked).toBe(0);
  });
});
