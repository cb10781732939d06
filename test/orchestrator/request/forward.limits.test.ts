/**
 * What the front door accepts, the agent accepts: a line or body of exactly the limit reaches the agent
 * (the orchestrator splices trace_id and timeout_ms into the client's bytes), numbers that would grow on
 * re-encoding pass as they came, and a request zod rewrote (re-encoded) that grows past the agents' limit
 * is the client's 413, never a 502 that counts against the agent's circuit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRequest, ndjsonExchange } from "../../../protocol/transport/client.js";
import { DEFAULT_LIMITS } from "../../../protocol/contract/limits.js";
import { echo, startAgency, type Agency } from "../harness.js";

let agency: Agency;
beforeAll(async () => {
  agency = await startAgency([{ name: "dummy", max_concurrent: 16 }], { circuit_failures: 2 });
}, 60_000);
afterAll(async () => {
  await agency?.stop();
});

/** A request whose JSON text is exactly `bytes` long (source_code padded). */
function requestOf(bytes: number, trace: string): string {
  const shell = JSON.stringify({ ...echo({ trace_id: trace }), context: { source_code: "" } });
  return JSON.stringify({ ...echo({ trace_id: trace }), context: { source_code: "a".repeat(bytes - shell.length) } });
}

const circuit = () => agency.orchestrator.agents[0]!.circuit;

describe("forwarding at the limit", () => {
  it("an NDJSON line of exactly maxLineBytes (1,048,576 bytes + newline) is served", async () => {
    const line = requestOf(DEFAULT_LIMITS.maxLineBytes - 1, "line-at-limit");
    expect(Buffer.byteLength(line) + 1).toBe(DEFAULT_LIMITS.maxLineBytes);
    const [answer] = await ndjsonExchange(agency.socket, line + "\n", { timeoutMs: 20_000 });
    expect(JSON.parse(answer!)).toMatchObject({ status: "success", trace_id: "line-at-limit", agent: "dummy" });
  });

  it("an HTTP body of exactly maxBodyBytes (1 MiB) is served", async () => {
    const body = requestOf(DEFAULT_LIMITS.maxBodyBytes, "body-at-limit");
    const r = await httpRequest(agency.socket, { body, timeoutMs: 20_000 });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ status: "success", trace_id: "body-at-limit" });
  });

  it("numbers that grow on re-encoding are forwarded as they came: served, the agent's circuit untouched", async () => {
    // 64,000 × "1e20," is 320 KB; re-encoded, each number would take 21 digits: 1.4 MB, over the agents'
    // limit. The orchestrator splices its fields into the client's bytes instead of re-encoding them.
    const grows = JSON.stringify({ ...echo({ trace_id: "grows" }), context: { n: [] } }).replace(
      "[]",
      `[${Array(64_000).fill("1e20").join(",")}]`,
    );
    expect(Buffer.byteLength(grows)).toBeLessThan(DEFAULT_LIMITS.maxBodyBytes);
    for (let i = 0; i < 3; i++) {
      const r = await httpRequest(agency.socket, { body: grows, timeoutMs: 20_000 });
      expect(JSON.parse(r.body)).toMatchObject({ status: "success", trace_id: "grows", agent: "dummy" });
    }
    const [line] = await ndjsonExchange(agency.socket, `${grows}\n`, { timeoutMs: 20_000 });
    expect(JSON.parse(line!)).toMatchObject({ status: "success", trace_id: "grows" });
    expect(circuit()).toMatchObject({ open: false, failures: 0 });
  });

  it("a request zod rewrites is re-encoded: growing past the agents' limit is the client's 413, never a 502", async () => {
    // A cursor with a key zod drops: the request forwarded is zod's copy, written out again.
    const grows = JSON.stringify({
      ...echo({ trace_id: "grows-copied" }),
      context: { n: [], cursor: { line: 1, column: 0, offset: 0 } },
    }).replace("[]", `[${Array(64_000).fill("1e20").join(",")}]`);
    for (let i = 0; i < 5; i++) {
      const r = await httpRequest(agency.socket, { body: grows, timeoutMs: 20_000 });
      expect(r.status).toBe(413);
      expect(JSON.parse(r.body).error).toMatchObject({ type: "AIP_ERR_PAYLOAD_TOO_LARGE" });
      expect(JSON.parse(r.body).error.detail).toMatch(/re-encoded/);
    }
    expect(circuit()).toMatchObject({ open: false, failures: 0 });
    // A little growth (within the forwarding headroom) is served.
    const some = JSON.stringify({
      ...echo({ trace_id: "grows-a-little" }),
      context: { n: [], cursor: { line: 1, column: 0, offset: 0 } },
    }).replace("[]", `[${Array(2_000).fill("1e20").join(",")}]`);
    const ok = await httpRequest(agency.socket, { body: some });
    expect(JSON.parse(ok.body)).toMatchObject({ status: "success", trace_id: "grows-a-little" });
  });
});
