/**
 * `aip reload` asked for while the agency is still starting: the reload waits for the start to end, then
 * hands over. Before, a SIGHUP before the front door listened was dropped, and one between the front
 * door and the admin socket started a successor that found the admin socket taken and failed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { httpRequest } from "../../../protocol/transport/client.js";
import { DIST, jsonLines, pidAlive, processesMentioning, tempDir } from "../../helpers.js";
import { FIXTURE_AGENT, manifestFor, until } from "../harness.js";

const AIP = join(DIST, "scripts/aip.js");

describe("aip reload during the start", () => {
  const t = tempDir("aiprs2-");
  const sock = join(t.dir, "aip.sock");
  const logFile = join(t.dir, "aip.log");
  // The agent listens only once this file exists: the test holds the start open while it sends SIGHUP.
  const gate = join(t.dir, "gate");
  const pids = new Set<number>();
  let up: ChildProcess | undefined;
  const events = (): Record<string, unknown>[] => (existsSync(logFile) ? jsonLines(readFileSync(logFile, "utf8")) : []);

  afterAll(async () => {
    for (const pid of pids) if (pidAlive(pid)) process.kill(pid, "SIGTERM");
    await until(() => [...pids].every((pid) => !pidAlive(pid)), 20_000, "orchestrators gone").catch(() => undefined);
    const stray = processesMentioning(t.dir);
    for (const pid of [...pids, ...stray]) if (pidAlive(pid)) process.kill(pid, "SIGKILL");
    t.cleanup();
  }, 30_000);

  it("waits for the start to end, then hands over to a successor", async () => {
    const manifest = join(t.dir, "held.json");
    writeFileSync(manifest, JSON.stringify(manifestFor({ name: "held" })));
    const config = join(t.dir, "agency.json");
    writeFileSync(
      config,
      JSON.stringify({
        socket: sock,
        agent_socket_dir: join(t.dir, "agents"),
        state_dir: join(t.dir, "state"),
        vetting: "off",
        agents: [
          {
            name: "held",
            command: [FIXTURE_AGENT],
            manifest,
            env: { FIXTURE_MANIFEST: manifest, FIXTURE_START_UNTIL: gate },
          },
        ],
        limits: { warm_standby: "off", shutdown_grace_ms: 3000, start_timeout_ms: 60_000 },
      }),
    );
    up = spawn(process.execPath, [AIP, "up", "--config", config, "--log", logFile], { stdio: "ignore" });
    pids.add(up.pid!);
    // The signal handlers are in place before the agents start.
    await until(() => events().some((l) => l.event === "agent_starting"), 30_000, "the agent starting");
    expect(events().some((l) => l.event === "ready")).toBe(false);
    process.kill(up.pid!, "SIGHUP");
    writeFileSync(gate, "");
    await until(
      async () => {
        const failed = events().find((l) => l.event === "reload_failed");
        if (failed) throw new Error(`the reload failed: ${String(failed.err)}`);
        if (!events().some((l) => l.event === "reload_handed_over")) return false;
        const { pid } = JSON.parse(
          (await httpRequest(sock, { path: "/livez", timeoutMs: 10_000, agent: false })).body,
        ) as {
          pid: number;
        };
        pids.add(pid);
        return pid !== up!.pid;
      },
      60_000,
      "the successor serving",
    );
    const order = events()
      .map((l) => l.event)
      .filter((e) => e === "reload_deferred" || e === "reload_requested" || e === "reload_handed_over");
    expect(order).toEqual(["reload_deferred", "reload_requested", "reload_handed_over"]);
    await until(() => up!.exitCode !== null, 30_000, "the old orchestrator stopped");
    const answer = await httpRequest(sock, {
      body: JSON.stringify({ action: "echo", context: {}, constraints: {} }),
      timeoutMs: 10_000,
      agent: false,
    });
    expect(answer.status).toBe(200);
  }, 120_000);
});
