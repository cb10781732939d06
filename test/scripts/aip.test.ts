import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForSocket } from "../../protocol/transport/client.js";
import { DIST, jsonLines, tempDir, writeDummyConfig } from "../helpers.js";

const AIP = join(DIST, "scripts/aip.js");
const run = promisify(execFile);

async function aip(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(AIP, args, { env: { ...process.env, ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Child pids of `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

describe("aip up (embedded) end to end", () => {
  let t: ReturnType<typeof tempDir>;
  let up: ChildProcess;
  let sock: string;
  let logFile: string;
  let agentPids: number[] = [];
  const port = 20_000 + Math.floor(Math.random() * 20_000);

  beforeAll(async () => {
    t = tempDir("aipu-");
    sock = join(t.dir, "aip.sock");
    logFile = join(t.dir, "aip.log");
    const config = writeDummyConfig(t.dir, {
      limits: { warm_standby: "off" }, // one child process to account for (the standby has its own test)
    });
    up = spawn(AIP, ["up", "--config", config, "--log", logFile, "--health-port", String(port)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    up.stdout!.resume();
    up.stderr!.resume();
    // A cold `aip up` and its agent: the suite's load can stretch the start by tens of seconds.
    await waitForSocket(sock, 60_000, () => up.exitCode === null);
    agentPids = childrenOf(up.pid!);
  }, 90_000);

  afterAll(async () => {
    if (up.exitCode === null && up.signalCode === null) {
      up.kill("SIGKILL");
      await new Promise((r) => up.once("exit", r));
    }
    t.cleanup();
  });

  it("answers curl --unix-socket with the dummy's echo", async () => {
    const { stdout } = await run("curl", [
      "-s",
      "--unix-socket",
      sock,
      "http://aip/v1/invoke",
      "-d",
      '{"action":"echo","context":{"source_code":"a\\nb"},"constraints":{}}',
    ]);
    expect(JSON.parse(stdout)).toMatchObject({
      status: "success",
      agent: "dummy",
      payload: { received_action: "echo", context_lines: 2 },
    });
  });

  it("answers NDJSON through socat, in order", async () => {
    const child = spawn("socat", ["-", `UNIX-CONNECT:${sock}`]);
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stdin.end(
      Array.from(
        { length: 5 },
        (_, i) => `{"action":"echo","context":{},"constraints":{},"trace_id":"sc-${i}"}\n`,
      ).join(""),
    );
    await new Promise((r) => child.on("close", r));
    expect(jsonLines(out).map((l) => l.trace_id)).toEqual(["sc-0", "sc-1", "sc-2", "sc-3", "sc-4"]);
  });

  it("aip invoke prints the payload, and the problem with exit 1", async () => {
    const file = join(t.dir, "x.ts");
    writeFileSync(file, "const a = 1;\nconst b = 2;\n");
    const ok = await aip(["invoke", "echo", "--file", file, "--socket", sock]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ received_action: "echo", context_lines: 3 });
    const bad = await aip(["invoke", "nope", "--socket", sock]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("AIP_ERR_NO_ROUTE (404)");
    const usage = await aip(["invoke", "echo", "--line", "3", "--socket", sock]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--line and --column go together");
  });

  it("aip health, agents and check print tables", async () => {
    const h = await aip(["health", "--socket", sock]);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/dummy\s+1\.0\.0\s+healthy/);
    const a = await aip(["agents", "--socket", sock]);
    expect(a.stdout).toMatch(/dummy\s+1\.0\.0\s+healthy\s+echo\s+\*/);
    const c = await aip(["check", "--json", "--socket", sock]);
    expect(JSON.parse(c.stdout).checked[0]).toMatchObject({ agent: "dummy", ok: true, action: "none" });
  });

  it("serves only the probes (/livez, /readyz, /healthz, /metrics) on the health port", async () => {
    const live = await fetch(`http://127.0.0.1:${port}/livez`);
    expect([live.status, (await live.json()) as { status: string; pid: number }]).toEqual([
      200,
      expect.objectContaining({ status: "alive", pid: up.pid }),
    ]);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: "ready", actions: { echo: ["dummy@1.0.0"] } }]);
    expect((await fetch(`http://127.0.0.1:${port}/v1/invoke`, { method: "POST", body: "{}" })).status).toBe(404);
    const h = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(h.status).toBe(200);
    expect(((await h.json()) as { agents: Record<string, { status: string }> }).agents.dummy!.status).toBe("healthy");
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain("aip_pool_size");
    expect((await fetch(`http://127.0.0.1:${port}/v1/agents`)).status).toBe(404);
  });

  it("SIGUSR1 runs a health check now", async () => {
    up.kill("SIGUSR1");
    const { until } = await import("../orchestrator/harness.js");
    await until(
      () =>
        existsSync(logFile) &&
        jsonLines(readFileSync(logFile, "utf8")).some((l) => l.event === "health_check_requested"),
      5000,
      "log line",
    );
  });

  it("logs one JSON line per request with timestamp, level label, agent_name, trace_id and event", () => {
    const lines = jsonLines(readFileSync(logFile, "utf8"));
    const req = lines.find((l) => l.event === "request" && l.outcome === "success");
    expect(req).toMatchObject({ level: "info", agent_name: "orchestrator", agent: "dummy" });
    expect(typeof req!.trace_id).toBe("string");
    expect(typeof req!.timestamp).toBe("string");
    // The agent's own output is drained into the same log, tagged with its name.
    expect(lines.some((l) => l.agent_name === "dummy" && l.event === "ready")).toBe(true);
  });

  it("SIGTERM stops every agent and removes every socket file", async () => {
    expect(agentPids.length).toBe(1);
    up.kill("SIGTERM");
    const code = await new Promise((r) => up.once("exit", r));
    expect(code).toBe(0);
    for (const pid of agentPids) expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(existsSync(sock)).toBe(false);
    expect(existsSync(join(t.dir, "agents/dummy.sock"))).toBe(false);
  });
});

describe("aip up with a bad config", () => {
  it("fails at start naming the JSON path and the reason", async () => {
    const t = tempDir();
    const config = join(t.dir, "agency.json");
    writeFileSync(
      config,
      JSON.stringify({
        mode: "cluster",
        agents: [{ name: "Bad Name", command: [], manifest: "m.json" }],
        limits: { max_queue: -1 },
      }),
    );
    const r = await aip(["up", "--config", config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("mode: Invalid option");
    expect(r.stderr).toContain("agents[0].name: expected a lowercase name");
    expect(r.stderr).toContain("agents[0].command:");
    expect(r.stderr).toContain("limits.max_queue:");
    writeFileSync(config, "{ not json");
    expect((await aip(["up", "--config", config])).stderr).toContain("is not valid JSON");
    t.cleanup();
  });

  it("env overrides apply and are validated too", async () => {
    const r = await aip(["up"], { AIP_MODE: "cluster" });
    expect(r.code).toBe(2);
    // The env registry checks it at start and names the variable (protocol/util/env.ts).
    expect(r.stderr).toMatch(/Invalid environment:\n {2}AIP_MODE\b[^\n]*embedded[^\n]*systemd/);
  });
});

describe("aip --help", () => {
  it("lists the commands and every command has --help", async () => {
    const r = await aip(["--help"]);
    expect(r.code).toBe(0);
    const commands = ["up", "invoke", "health", "agents", "check"];
    for (const c of commands) expect(r.stdout).toContain(`  ${c}`);
    const helps = await Promise.all(commands.map((c) => aip([c, "--help"])));
    helps.forEach((h, i) => expect(h.stdout).toContain(`Usage: aip ${commands[i]}`));
    expect((await aip(["frobnicate"])).code).toBe(2);
    // Seven cold starts of aip: the suite's load can stretch them past the default limit.
  }, 120_000);
});
