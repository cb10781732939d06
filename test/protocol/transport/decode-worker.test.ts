/**
 * Large requests decoded off the event loop (protocol/transport/decode-worker.ts): the worker's skeleton gets the
 * same answer from validation as the whole request (the same error for every fault, the request itself
 * when valid), and forwarding it sends what forwarding the whole request sends.
 */
import { afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { encodeForAgent } from "../../../orchestrator/request/forward.js";
import { DecodeWorker } from "../../../protocol/transport/decode-worker.js";
import { AipError } from "../../../protocol/contract/errors.js";
import { decodeJsonText } from "../../../protocol/transport/json.js";
import type { AipRequest } from "../../../protocol/contract/schemas.js";
import { AipServer } from "../../../protocol/transport/server.js";
import { httpRequest, ndjsonExchange } from "../../../protocol/transport/client.js";
import { validateRequest } from "../../../protocol/contract/validate.js";
import { tempDir } from "../../helpers.js";

const BIG = 64 * 1024;
const pad = "x".repeat(BIG);
const worker = new DecodeWorker(0, 64);
afterAll(() => worker.close());

type Outcome = { error: { code: string; message: string; extensions?: unknown } } | { request: AipRequest };

function outcome(fn: () => AipRequest): Outcome {
  try {
    return { request: fn() };
  } catch (err) {
    if (!(err instanceof AipError)) throw err;
    return { error: { code: err.code, message: err.message, extensions: err.extensions } };
  }
}

/** The request decoded whole here, and through the worker, each then validated. */
async function bothWays(bytes: Buffer): Promise<{ whole: Outcome; off: Outcome; source?: { text: string } }> {
  const whole = outcome(() => validateRequest(decodeJsonText(bytes, 64).value));
  let decoded: Awaited<ReturnType<DecodeWorker["decode"]>> | undefined;
  let decodeError: Outcome | undefined;
  try {
    decoded = await worker.decode(bytes);
  } catch (err) {
    decodeError = outcome(() => {
      throw err;
    });
  }
  const off = decodeError ?? outcome(() => validateRequest(decoded!.value));
  return { whole, off, ...(decoded ? { source: decoded.source } : {}) };
}

const request = (extra: Record<string, unknown> = {}, context: Record<string, unknown> = {}): string =>
  JSON.stringify({ action: "echo", context: { source_code: pad, ...context }, constraints: {}, ...extra });

describe("decoding in a worker", () => {
  it("runs in a worker thread: the skeleton has no source, the text is the request's", async () => {
    const text = request({}, { language: "ts", notes: [1e20, 2] });
    const { value, source } = await worker.decode(Buffer.from(text));
    expect(value).toEqual({ action: "echo", constraints: {}, context: { source_code: "", language: "ts" } });
    expect(source.text).toBe(text);
    expect(source).toMatchObject({
      validated: true,
      members: [{ key: "action" }, { key: "context" }, { key: "constraints" }],
    });
  });

  it("every fault gets the error the whole request gets", async () => {
    const faults: Buffer[] = [
      Buffer.concat([Buffer.from(request()), Buffer.from([0xff])]),
      Buffer.from(request().slice(0, -1)),
      Buffer.from(`{"a":${"[".repeat(70)}${"]".repeat(70)},"p":"${pad}"}`),
      Buffer.from(" ".repeat(BIG)),
      Buffer.from(JSON.stringify([pad])),
      Buffer.from(JSON.stringify(pad)),
      Buffer.from(JSON.stringify({ context: { source_code: pad } })),
      Buffer.from(request({ action: "" })),
      Buffer.from(request({ trace_id: "bad id" })),
      Buffer.from(request({ constraints: { timeout_ms: 1.5, languages: [""] } })),
      Buffer.from(request({}, { cursor: { line: 0, column: -1 } })),
      Buffer.from(request({}, { language: "", file_path: 3 })),
      Buffer.from(request({}, { source_code: [pad] })),
      Buffer.from(request({ context: [pad] })),
      Buffer.from(request({ constraints: pad })),
    ];
    for (const bytes of faults) {
      const { whole, off } = await bothWays(bytes);
      expect("error" in whole, bytes.subarray(0, 80).toString()).toBe(true);
      expect(off, bytes.subarray(0, 80).toString()).toEqual(whole);
    }
  });

  it("a valid request: validation returns the skeleton itself, and the agent is sent what the whole request would send", async () => {
    const valid = [
      request(),
      `\ufeff \n${request({ trace_id: "mine", constraints: { timeout_ms: 5e3, agent: "dummy" } }, { language: "ts" })}`,
      request({}, { cursor: { line: 3, column: 1 }, n: "N" }).replace(
        '"N"',
        `[${Array(20_000).fill("1e20").join(",")}]`,
      ),
      // zod rewrites this one (a cursor key it drops): the worker forwards zod's copy, re-encoded.
      request({ constraints: { max_tokens: 5 } }, { cursor: { line: 1, column: 0, offset: 9 } }),
    ];
    for (const text of valid) {
      const bytes = Buffer.from(text);
      const { whole, off, source } = await bothWays(bytes);
      expect("request" in whole && "request" in off).toBe(true);
      const skeleton = (off as { request: AipRequest }).request;
      const full = (whole as { request: AipRequest }).request;
      const deadline = Date.now() + 60_000;
      const sent = JSON.parse(encodeForAgent(skeleton, "t-1", deadline, source)) as AipRequest;
      const expected = JSON.parse(encodeForAgent(full, "t-1", deadline)) as AipRequest;
      delete sent.constraints.timeout_ms;
      delete expected.constraints.timeout_ms;
      expect(sent).toEqual(expected);
    }
  });
});

describe("a server with decodeWorkerBytes", () => {
  it("gives invoke a skeleton for a large request, the whole value for a small one, and the same errors", async () => {
    const { dir, cleanup } = tempDir("aipt-decode-");
    const seen: { value: unknown; text: string }[] = [];
    const server = await AipServer.listen({
      socketPath: join(dir, "s.sock"),
      decodeWorkerBytes: BIG,
      invoke: async (value, ctx) => {
        seen.push({ value, text: ctx.source.text });
        return { status: "success", trace_id: "t-1", payload: {} };
      },
    });
    try {
      const big = request({ trace_id: "t-1" });
      const small = JSON.stringify({ action: "echo", context: { source_code: "a" }, constraints: {} });
      await httpRequest(server.socketPath, { body: big });
      await ndjsonExchange(server.socketPath, `${small}\n`);
      expect(seen[0]).toEqual({
        value: { action: "echo", trace_id: "t-1", constraints: {}, context: { source_code: "" } },
        text: big,
      });
      expect(seen[1]).toEqual({ value: JSON.parse(small), text: small });
      const bad = await httpRequest(server.socketPath, { body: big.slice(0, -1) });
      const badSmall = await httpRequest(server.socketPath, { body: `${small.slice(0, -1)}` });
      expect(JSON.parse(bad.body).error.type).toBe("AIP_ERR_INVALID_JSON");
      expect(JSON.parse(bad.body).error.detail).toMatch(/^JSON parse failed/);
      expect(JSON.parse(badSmall.body).error.type).toBe("AIP_ERR_INVALID_JSON");
      expect(seen).toHaveLength(2);
    } finally {
      await server.close();
      cleanup();
    }
  });
});
