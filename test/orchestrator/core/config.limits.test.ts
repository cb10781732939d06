/**
 * `limits.request_receive_timeout_ms`: validated with its siblings' rules (a bad value stops the start,
 * naming the key) and applied to the orchestrator's HTTP servers, the front door and the admin socket.
 */
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../../orchestrator/core/config.js";
import { DEFAULT_LIMITS } from "../../../protocol/contract/limits.js";
import { isEnvelope, parseResponses, rawExchange } from "../../reliability/lib/raw.js";
import { AIP } from "../../reliability/lib/agency.js";
import { ROOT, tempDir, writeDummyConfig } from "../../helpers.js";
import { startAgency, type Agency } from "../harness.js";

const agents = [{ name: "dummy", command: ["dist/agents/dummy/main.js"], manifest: "manifests/dummy.json" }];
const KEY = "limits.request_receive_timeout_ms";

describe(KEY, () => {
  it("defaults to the protocol's requestReceiveTimeoutMs", () => {
    expect(parseConfig({ agents }, ROOT).limits.request_receive_timeout_ms).toBe(
      DEFAULT_LIMITS.requestReceiveTimeoutMs,
    );
    expect(parseConfig({ agents, limits: { request_receive_timeout_ms: 25_000 } }, ROOT).limits).toMatchObject({
      request_receive_timeout_ms: 25_000,
      headers_timeout_ms: DEFAULT_LIMITS.headersTimeoutMs,
    });
  });

  for (const [what, value, reason] of [
    ["zero", 0, /too small|>0/],
    ["negative", -1, /too small|>0/],
    ["a fraction", 1.5, /expected int/],
    ["a string", "30s", /number/],
  ] as const) {
    it(`${what} is refused, naming the key`, () => {
      const parse = (): unknown => parseConfig({ agents, limits: { request_receive_timeout_ms: value } }, ROOT);
      expect(parse).toThrow(ConfigError);
      expect(parse).toThrow(new RegExp(`${KEY.replace(".", "\\.")}: .*`));
      expect(parse).toThrow(reason);
    });
  }

  it("less than headers_timeout_ms is refused, naming the key (node:http would throw at start)", () => {
    expect(() =>
      parseConfig({ agents, limits: { headers_timeout_ms: 5000, request_receive_timeout_ms: 4000 } }, ROOT),
    ).toThrow(`${KEY}: must be at least headers_timeout_ms`);
    // Equal is allowed: the head's deadline is the whole request's.
    expect(
      parseConfig({ agents, limits: { headers_timeout_ms: 5000, request_receive_timeout_ms: 5000 } }, ROOT).limits
        .request_receive_timeout_ms,
    ).toBe(5000);
  });

  it("aip up refuses a bad value at start: exit 2, the message names the key", () => {
    const t = tempDir("aipcl-");
    try {
      const config = writeDummyConfig(t.dir, { limits: { request_receive_timeout_ms: -5 } });
      const r = spawnSync(process.execPath, [AIP, "up", "--config", config], { encoding: "utf8", timeout: 60_000 });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`${KEY}:`);
    } finally {
      t.cleanup();
    }
  });
});

describe(`${KEY} reaches the HTTP servers`, () => {
  let agency: Agency;
  beforeAll(async () => {
    agency = await startAgency([{ name: "fx" }], { headers_timeout_ms: 300, request_receive_timeout_ms: 400 });
  }, 60_000);
  afterAll(async () => {
    await agency?.stop();
  });

  /**
   * The default (30 s) and the idle timeout (60 s) are beyond the exchange's wait: a 408 within it can only
   * come from the configured value.
   */
  const WAIT_MS = 20_000;

  for (const which of ["front door", "admin socket"] as const) {
    it(`${which}: a body that stops short is answered 408 and the connection closed`, async () => {
      expect(DEFAULT_LIMITS.requestReceiveTimeoutMs).toBeGreaterThan(WAIT_MS);
      const socket = which === "front door" ? agency.socket : agency.adminSocket;
      const head = "POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Type: application/json\r\n";
      // The client does not half-close: the answer and the close must come from the server.
      const { data, closed } = await rawExchange(
        socket,
        Buffer.from(`${head}Content-Length: 100\r\n\r\n{"action":`),
        WAIT_MS,
        { end: false },
      );
      expect(closed).toBe(true);
      const [r] = parseResponses(data);
      expect(r?.status, data.toString("latin1").slice(0, 300)).toBe(408);
      expect(isEnvelope(r!.body)).toBe(true);
      expect(JSON.parse(r!.body).error).toMatchObject({
        type: "AIP_ERR_INVALID_JSON",
        detail: "HTTP request did not arrive in time",
      });
    });
  }
});
