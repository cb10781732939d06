import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runConformance } from "../../../tools/conformance/kit.js";
import { conformanceSuite } from "../../conformance.js";
import { DUMMY, ROOT, jsonLines, servedAgent, tempDir } from "../../helpers.js";

conformanceSuite("agent-dummy conformance", () => runConformance(DUMMY));

describe("agent-dummy", () => {
  const agent = servedAgent(DUMMY);

  it("prints exactly the checked-in manifest", () => {
    const printed = JSON.parse(execFileSync(DUMMY, ["--manifest"], { encoding: "utf8" })) as unknown;
    expect(printed).toEqual(JSON.parse(readFileSync(join(ROOT, "manifests/dummy.json"), "utf8")));
  });

  it("one-shot: echoes the action, line count and trace id with nothing on stderr", () => {
    const child = spawn(DUMMY, [], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.stdin.end('{"action":"echo","context":{"source_code":"a\\nb\\nc"},"constraints":{},"trace_id":"t-9"}');
    return new Promise<void>((resolve) =>
      child.on("close", (code) => {
        expect(code).toBe(0);
        expect(err).toBe("");
        expect(JSON.parse(out)).toMatchObject({
          status: "success",
          trace_id: "t-9",
          agent: "dummy",
          payload: { received_action: "echo", context_lines: 3, trace_id: "t-9" },
        });
        resolve();
      }),
    );
  });

  it("answers curl --unix-socket", () => {
    const out = execFileSync(
      "curl",
      [
        "-s",
        "--unix-socket",
        agent.socket,
        "http://aip/v1/invoke",
        "-d",
        '{"action":"echo","context":{},"constraints":{}}',
      ],
      { encoding: "utf8" },
    );
    expect(JSON.parse(out)).toMatchObject({
      status: "success",
      payload: { received_action: "echo", context_lines: 0 },
    });
    const health = JSON.parse(
      execFileSync("curl", ["-s", "--unix-socket", agent.socket, "http://aip/healthz"], { encoding: "utf8" }),
    ) as Record<string, unknown>;
    expect(health).toMatchObject({ status: "ok", agent: "dummy", version: "1.0.0", max_concurrent: 256 });
  });

  it("answers NDJSON through socat", () => {
    const out = execFileSync("socat", ["-", `UNIX-CONNECT:${agent.socket}`], {
      input:
        '{"action":"echo","context":{},"constraints":{},"trace_id":"s-1"}\n{"action":"echo","context":{},"constraints":{},"trace_id":"s-2"}\n',
      encoding: "utf8",
    });
    expect(jsonLines(out).map((l) => l.trace_id)).toEqual(["s-1", "s-2"]);
  });

  it("times out at constraints.timeout_ms with AIP_ERR_TIMEOUT", () => {
    const out = execFileSync(
      "curl",
      [
        "-s",
        "--unix-socket",
        agent.socket,
        "http://aip/v1/invoke",
        "-d",
        '{"action":"echo","context":{},"constraints":{"timeout_ms":50,"delay_ms":5000}}',
      ],
      { encoding: "utf8" },
    );
    expect(JSON.parse(out).error).toMatchObject({ type: "AIP_ERR_TIMEOUT", status: 504 });
  });
});

describe("agent-dummy logs", () => {
  it("writes pino JSON Lines with timestamp, level label, agent_name, trace_id and event", async () => {
    const t = tempDir();
    const logFile = join(t.dir, "agent.log");
    const sock = join(t.dir, "l.sock");
    const child = spawn(DUMMY, ["--listen", sock], {
      env: { ...process.env, AIP_LOG_FILE: logFile, AIP_LOG_LEVEL: "debug" },
      stdio: "ignore",
    });
    const { waitForSocket, invokeHttp } = await import("../../../protocol/transport/client.js");
    try {
      await waitForSocket(sock);
      await invokeHttp(sock, { action: "echo", context: {}, constraints: {}, trace_id: "log-1" });
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.on("exit", r));
    }
    const lines = jsonLines(readFileSync(logFile, "utf8"));
    const req = lines.find((l) => l.event === "request" && l.trace_id === "log-1");
    expect(req).toMatchObject({ level: "debug", agent_name: "dummy", outcome: "success" });
    expect(typeof req!.timestamp).toBe("string");
    expect(lines.map((l) => l.event)).toEqual(expect.arrayContaining(["ready", "shutdown", "stopped"]));
    t.cleanup();
  });
});
