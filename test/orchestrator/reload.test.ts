import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { Agent } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRequest, waitForSocket } from "../../protocol/client.js";
import { DIST, jsonLines, pidAlive, tempDir, writeDummyConfig } from "../helpers.js";
import { until } from "./harness.js";

const run = promisify(execFile);
const AIP = join(DIST, "scripts/aip.js");

describe("aip reload (embedded): a new orchestrator on the same socket, the agents kept", () => {
  const t = tempDir("aiprl-");
  const sock = join(t.dir, "aip.sock");
  const logFile = join(t.dir, "aip.log");
  let up: ChildProcess;
  const pids = new Set<number>();
  const health = async (): Promise<{ pid: number; agents: { dummy: { pid: number; status: string } } }> => {
    const h = JSON.parse((await httpRequest(sock, { path: "/healthz", timeoutMs: 10_000, agent: false })).body) as {
      pid: number;
      agents: { dummy: { pid: number; status: string } };
    };
    pids.add(h.pid);
    pids.add(h.agents.dummy.pid);
    return h;
  };

  beforeAll(async () => {
    const config = writeDummyConfig(t.dir, {
      vetting: "off",
      limits: { shutdown_grace_ms: 3000 },
    });
    up = spawn(process.execPath, [AIP, "up", "--config", config, "--log", logFile], { stdio: "ignore" });
    await waitForSocket(sock, 30_000, () => up.exitCode === null);
    await until(async () => (await health()).agents.dummy.status === "healthy", 30_000, "dummy healthy");
  }, 60_000);

  afterAll(async () => {
    for (const pid of pids) if (pidAlive(pid)) process.kill(pid, "SIGKILL");
    t.cleanup();
  });

  it("under load: nobody refused, every request answered, the agent process the same", async () => {
    const before = await health();
    let stop = false;
    const counts = { ok: 0, refused: 0, closed_unread: 0, other: 0 };
    const errors: string[] = [];
    const client = async (agent: Agent | false): Promise<void> => {
      while (!stop) {
        try {
          const r = await httpRequest(sock, {
            body: JSON.stringify({ action: "echo", context: {}, constraints: {} }),
            timeoutMs: 20_000,
            agent,
          });
          if (r.status === 200) counts.ok++;
          else {
            counts.other++;
            errors.push(`HTTP ${r.status}`);
          }
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === "ECONNREFUSED" || code === "ENOENT") counts.refused++;
          else if (code === "ECONNRESET" || /socket hang up/.test((err as Error).message)) counts.closed_unread++;
          else {
            counts.other++;
            errors.push(String(code ?? (err as Error).message));
          }
        }
      }
    };
    // 16 clients on a fresh connection per request, 4 on keep-alive connections.
    const clients = [
      ...Array.from({ length: 16 }, () => client(false)),
      ...Array.from({ length: 4 }, () => client(new Agent({ keepAlive: true, maxSockets: 1 }))),
    ];
    await until(() => counts.ok > 100, 20_000, "steady load");
    const r = await run(process.execPath, [AIP, "reload", "--socket", sock]);
    expect(r.stdout).toMatch(new RegExp(`^reloaded: orchestrator ${before.pid} → (\\d+)$`, "m"));
    const okAtReload = counts.ok;
    await until(() => counts.ok > okAtReload + 100, 20_000, "load after the reload");
    stop = true;
    await Promise.all(clients);
    console.log(`reload under load: ${JSON.stringify(counts)} ${errors.slice(0, 5).join("; ")}`);
    const after = await health();
    expect(after.pid).not.toBe(before.pid);
    expect(pidAlive(before.pid)).toBe(false);
    expect(after.agents.dummy).toMatchObject({ status: "healthy", pid: before.agents.dummy.pid });
    expect(counts.refused).toBe(0);
    expect(counts.other).toBe(0);
    expect(existsSync(sock)).toBe(true);
    const lines = jsonLines(readFileSync(logFile, "utf8"));
    expect(lines.filter((l) => l.event === "agent_adopted").map((l) => [l.agent_name, l.pid])).toEqual([
      ["dummy", before.agents.dummy.pid],
    ]);
    expect(lines.some((l) => l.event === "reload_handed_over" && l.successor_pid === after.pid)).toBe(true);
  }, 90_000);

  it("the new orchestrator stops the adopted agent and removes the socket on SIGTERM", async () => {
    const h = await health();
    process.kill(h.pid, "SIGTERM");
    await until(() => !pidAlive(h.pid) && !pidAlive(h.agents.dummy.pid), 20_000, "orchestrator and agent gone");
    expect(existsSync(sock)).toBe(false);
  }, 30_000);
});
