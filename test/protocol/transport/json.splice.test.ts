/**
 * Forwarding a request as its client sent it: spliceJsonObject replaces named members of a JSON object's
 * text and copies the rest byte for byte; encodeForAgent uses it for the orchestrator's trace_id and
 * timeout_ms (and a scoped client_id), so the agent gets exactly what the orchestrator decoded.
 */
import { describe, expect, it } from "vitest";
import { encodeForAgent } from "../../../orchestrator/request/forward.js";
import { AipError } from "../../../protocol/contract/errors.js";
import { decodeJsonText, spliceJsonObject } from "../../../protocol/transport/json.js";
import { AGENT_LIMITS, DEFAULT_LIMITS } from "../../../protocol/contract/limits.js";
import type { AipRequest } from "../../../protocol/contract/schemas.js";
import { validateRequest } from "../../../protocol/contract/validate.js";

/** The keys of every object in a JSON text, in order, duplicates included (a reference for "no duplicates"). */
function objectKeys(text: string): string[][] {
  const out: string[][] = [];
  const stack: (string[] | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const top = stack[stack.length - 1];
      if (top && expectKey) top.push(JSON.parse(text.slice(i, j + 1)) as string);
      expectKey = false;
      i = j;
    } else if (c === "{") {
      const keys: string[] = [];
      out.push(keys);
      stack.push(keys);
      expectKey = true;
    } else if (c === "[") stack.push(null);
    else if (c === "}" || c === "]") stack.pop();
    else if (c === ",") expectKey = stack[stack.length - 1] !== null;
  }
  return out;
}

const hasDuplicates = (text: string): boolean => objectKeys(text).some((keys) => new Set(keys).size !== keys.length);

/** What the agent gets: the request decoded from `text`, validated, encoded for the agent both ways. */
function bothWays(text: string, trace = "t-1"): { spliced: string; reencoded: string } {
  const deadline = Date.now() + 60_000;
  const a = validateRequest(decodeJsonText(Buffer.from(text), 64).value);
  const b = validateRequest(JSON.parse(text));
  const spliced = encodeForAgent(a, trace, deadline, { text });
  const reencoded = encodeForAgent(b, trace, deadline);
  return { spliced, reencoded };
}

/** The two encodings decode to the same request (timeout_ms, the budget left at each call, aside). */
function sameRequest(text: string): string {
  const { spliced, reencoded } = bothWays(text);
  const x = JSON.parse(spliced) as AipRequest;
  const y = JSON.parse(reencoded) as AipRequest;
  expect(x.constraints.timeout_ms).toBeGreaterThan(59_000);
  delete x.constraints.timeout_ms;
  delete y.constraints.timeout_ms;
  expect(x).toEqual(y);
  expect(hasDuplicates(spliced), spliced).toBe(false);
  return spliced;
}

describe("spliceJsonObject", () => {
  it("replaces, drops and appends members, copying the others as they came", () => {
    const text = ' \n{ "a" : 1e20 , "b":[1, {"b":2}],"c" :"x\\"}" }\n';
    expect(spliceJsonObject(text, { b: '"new"' })).toBe('{"a" : 1e20,"c" :"x\\"}","b":"new"}');
    expect(spliceJsonObject(text, { b: undefined })).toBe('{"a" : 1e20,"c" :"x\\"}"}');
    expect(spliceJsonObject(text, { d: "true" })).toBe(
      '{"a" : 1e20 ,"b":[1, {"b":2}],"c" :"x\\"}","d":true}'.replace(" ,", ","),
    );
    expect(spliceJsonObject("{}", { d: "null" })).toBe('{"d":null}');
    expect(spliceJsonObject("{ }", {})).toBe("{}");
  });

  it("drops every duplicate of a replaced key and gives the function the last one's value, as JSON.parse keeps", () => {
    const text = '{"k":{"x":1},"a":0,"k":{"x":2,"y":[3]}}';
    const seen: string[] = [];
    const out = spliceJsonObject(text, {
      k: (at) => {
        seen.push(text.slice(at!, at! + 6));
        return spliceJsonObject(text, { x: "9" }, at);
      },
    });
    expect(seen).toEqual(['{"x":2']);
    expect(out).toBe('{"a":0,"k":{"y":[3],"x":9}}');
    expect(spliceJsonObject('{"a":1}', { k: (at) => (at === undefined ? "0" : "1") })).toBe('{"a":1,"k":0}');
  });

  it("matches keys as JSON.parse decodes them (escapes), and keeps unicode byte for byte", () => {
    const text = '{"trace\\u005fid":"x","é\\ud83d\\ude00":"😀\\u2028","s":"a\\\\"}';
    expect(spliceJsonObject(text, { trace_id: '"y"' })).toBe(
      '{"é\\ud83d\\ude00":"😀\\u2028","s":"a\\\\","trace_id":"y"}',
    );
    expect(JSON.parse(spliceJsonObject(text, { trace_id: '"y"' }))).toEqual({ ...JSON.parse(text), trace_id: "y" });
  });
});

describe("encodeForAgent: the client's bytes, the orchestrator's fields spliced in", () => {
  it("adds trace_id and timeout_ms when absent, replaces them when present, once each", () => {
    const absent = sameRequest('{"action":"echo","context":{"n":[1.50,2e3]},"constraints":{}}');
    expect(absent).toMatch(
      /^\{"action":"echo","context":\{"n":\[1\.50,2e3\]\},"trace_id":"t-1","constraints":\{"timeout_ms":\d+\}\}$/,
    );
    const present = sameRequest(
      '{"trace_id":"mine","constraints":{"timeout_ms":5e3,"max_tokens":7},"action":"echo","context":{}}',
    );
    expect(present).toMatch(
      /^\{"action":"echo","context":\{\},"trace_id":"t-1","constraints":\{"max_tokens":7,"timeout_ms":\d+\}\}$/,
    );
  });

  it("duplicate keys: the agent sees the values the orchestrator decoded (the last), never two", () => {
    sameRequest(
      '{"constraints":{"timeout_ms":1},"trace_id":"a","action":"echo","context":{},"trace_id":"b","constraints":{"agent":"dummy","timeout_ms":2,"timeout_ms":3}}',
    );
    const { spliced } = bothWays(
      '{"action":"echo","context":{},"constraints":{"agent":"x"},"constraints":{"agent":"dummy"}}',
    );
    expect(JSON.parse(spliced).constraints.agent).toBe("dummy");
  });

  it("a scoped client_id (latest wins per connection) is the orchestrator's; any other is the client's", () => {
    const text = '{"action":"echo","context":{},"constraints":{"document_id":"d","client_id":"ed\\u0069tor"}}';
    const request = validateRequest(JSON.parse(text));
    request.constraints.client_id = "c7~editor";
    const out = JSON.parse(encodeForAgent(request, "t", Date.now() + 1000, { text }));
    expect(out.constraints).toMatchObject({ document_id: "d", client_id: "c7~editor" });
    // A client_id that is not a string is never scoped: forwarded as it came.
    const odd = '{"action":"echo","context":{},"constraints":{"client_id":[1e20]}}';
    expect(encodeForAgent(validateRequest(JSON.parse(odd)), "t", Date.now() + 1000, { text: odd })).toContain(
      '"client_id":[1e20]',
    );
  });

  it("unicode, escapes and blank space pass as they came", () => {
    const text =
      '\n { "action" : "echo", "context": {"source_code": "const s = \\"é😀\\\\u0041\\"; // \u2028 \\ud83d\\ude00", "language":"ts"},\t"constraints":{ } } ';
    const spliced = sameRequest(text);
    expect(spliced).toContain(
      '"context": {"source_code": "const s = \\"é😀\\\\u0041\\"; // \u2028 \\ud83d\\ude00", "language":"ts"}',
    );
  });

  it("numbers that grow on re-encoding are forwarded unchanged (64,000 × 1e20: 320 KB, not 1.4 MB)", () => {
    const text = JSON.stringify({ action: "echo", context: { n: [] }, constraints: {} }).replace(
      "[]",
      `[${Array(64_000).fill("1e20").join(",")}]`,
    );
    const spliced = encodeForAgent(validateRequest(JSON.parse(text)), "t", Date.now() + 1000, { text });
    expect(spliced.length).toBeLessThan(text.length + 100);
    expect(spliced).toContain(`[${Array(64_000).fill("1e20").join(",")}]`);
    // Re-encoded, the same request is over the agents' limit: the client's 413, as before.
    const request = validateRequest(JSON.parse(text));
    let err: unknown;
    try {
      encodeForAgent(request, "t", Date.now() + 1000);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AipError);
    expect((err as AipError).code).toBe("AIP_ERR_PAYLOAD_TOO_LARGE");
  });

  it("a request of exactly the front door's limit stays within the agents' limit with the fields spliced in", () => {
    const shell = JSON.stringify({ action: "echo", context: { source_code: "" }, constraints: {} });
    const text = shell.replace(
      '"source_code":""',
      `"source_code":"${"é".repeat(Math.floor((DEFAULT_LIMITS.maxBodyBytes - shell.length) / 2))}${"a".repeat((DEFAULT_LIMITS.maxBodyBytes - shell.length) % 2)}"`,
    );
    expect(Buffer.byteLength(text)).toBe(DEFAULT_LIMITS.maxBodyBytes);
    const trace = "x".repeat(128);
    const request = validateRequest(decodeJsonText(Buffer.from(text), 64).value);
    const out = encodeForAgent(request, trace, Date.now() + 3_600_000, { text });
    expect(Buffer.byteLength(out)).toBeGreaterThan(DEFAULT_LIMITS.maxBodyBytes);
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(AGENT_LIMITS.maxBodyBytes);
    expect(JSON.parse(out)).toMatchObject({
      trace_id: trace,
      context: { source_code: JSON.parse(text).context.source_code },
    });
  });
});
