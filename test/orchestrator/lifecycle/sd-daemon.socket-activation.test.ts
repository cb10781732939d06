import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRequest } from "../../../protocol/transport/client.js";
import { DIST, pidAlive, tempDir, writeDummyConfig } from "../../helpers.js";
import { until } from "../harness.js";

/**
 * systemd's side played by real tools: systemd-socket-activate creates and holds the listening socket
 * (as aip-orchestrator.socket does) and passes it as fd 3 with LISTEN_FDS/LISTEN_PID; a shell loop
 * restarts `aip up` when it exits (Restart=always) while the socket stays open; socat receives the
 * sd_notify datagrams on a NOTIFY_SOCKET the test creates.
 */
describe("under socket activation and sd_notify", () => {
  const t = tempDir("aipsa-");
  const sock = join(t.dir, "aip.sock");
  const notifySock = join(t.dir, "notify");
  const stopFile = join(t.dir, "stop");
  let holder: ChildProcess;
  let receiver: ChildProcess;
  let notified = "";
  const pids = new Set<number>();
  const healthPid = async (): Promise<number> => {
    const pid = (
      JSON.parse((await httpRequest(sock, { path: "/livez", timeoutMs: 20_000, agent: false })).body) as { pid: number }
    ).pid;
    pids.add(pid);
    return pid;
  };

  beforeAll(async () => {
    receiver = spawn("socat", ["-u", `UNIX-RECV:${notifySock}`, "STDOUT"], { stdio: ["ignore", "pipe", "inherit"] });
    receiver.stdout!.on("data", (d: Buffer) => (notified += d.toString()));
    await until(() => existsSync(notifySock), 20_000, "notify socket");
    const config = writeDummyConfig(t.dir, {
      vetting: "off",
      limits: { shutdown_grace_ms: 2000 },
    });
    const up = `${process.execPath} ${join(DIST, "scripts/aip.js")} up --config ${config} --log ${join(t.dir, "aip.log")}`;
    const loop = `while [ ! -e ${stopFile} ]; do sh -c 'export LISTEN_PID=$$; exec ${up}'; done`;
    holder = spawn(
      "systemd-socket-activate",
      ["-l", sock, "-E", `NOTIFY_SOCKET=${notifySock}`, "-E", "WATCHDOG_USEC=400000", "sh", "-c", loop],
      { stdio: "ignore" },
    );
    await until(() => existsSync(sock), 20_000, "listening socket");
  }, 30_000);

  afterAll(async () => {
    writeFileSync(stopFile, "");
    for (const pid of pids) if (pidAlive(pid)) process.kill(pid, "SIGTERM");
    await until(() => holder.exitCode !== null || holder.signalCode !== null, 15_000, "holder exit").catch(() =>
      holder.kill("SIGKILL"),
    );
    receiver.kill();
    t.cleanup();
  });

  it("a client that connected before any orchestrator ran is served once the agents are registered", async () => {
    // This first connection is what makes systemd-socket-activate start the service.
    const r = await httpRequest(sock, {
      body: JSON.stringify({ action: "echo", context: { source_code: "a\nb" }, constraints: {} }),
      timeoutMs: 30_000,
      agent: false,
    });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ status: "success", agent: "dummy", payload: { context_lines: 2 } });
    // A log file is written once per event-loop turn (docs/performance.md, "The orchestrator hop": LineBatchFile): the line may follow the answer.
    await until(
      () => readFileSync(join(t.dir, "aip.log"), "utf8").includes('"inherited_fd":3'),
      10_000,
      'the log line with "inherited_fd":3',
    );
  }, 40_000);

  it("notifies READY=1 with MAINPID and a STATUS line, then WATCHDOG=1 pings", async () => {
    const pid = await healthPid();
    await until(() => notified.includes("WATCHDOG=1"), 20_000, "a watchdog ping");
    expect(notified).toContain("READY=1\n");
    expect(notified).toContain(`MAINPID=${pid}\n`);
    expect(notified).toContain("STATUS=ready: 1/1 agents available\n");
    expect(notified.indexOf("STATUS=starting: registering 1 agents")).toBeLessThan(notified.indexOf("READY=1"));
  });

  it("a restart refuses nobody: clients wait in the held socket's backlog for the next orchestrator", async () => {
    const first = await healthPid();
    let stop = false;
    const counts = { ok: 0, refused: 0, other: 0 };
    const errors: string[] = [];
    const client = async (): Promise<void> => {
      while (!stop) {
        try {
          const r = await httpRequest(sock, {
            body: JSON.stringify({ action: "echo", context: {}, constraints: {} }),
            timeoutMs: 30_000,
            agent: false,
          });
          if (r.status === 200) counts.ok++;
          else {
            counts.other++;
            errors.push(`HTTP ${r.status} ${r.body.slice(0, 120)}`);
          }
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === "ECONNREFUSED" || code === "ENOENT") counts.refused++;
          else {
            counts.other++;
            errors.push(String(code ?? (err as Error).message));
          }
        }
      }
    };
    const clients = Array.from({ length: 20 }, client);
    await until(() => counts.ok > 50, 20_000, "steady load");
    process.kill(first, "SIGTERM");
    await until(async () => (await healthPid().catch(() => first)) !== first, 30_000, "a new orchestrator");
    const okAtRestart = counts.ok;
    await until(() => counts.ok > okAtRestart + 50, 20_000, "load after the restart");
    stop = true;
    await Promise.all(clients);
    console.log(`restart under socket activation: ${JSON.stringify(counts)} ${errors.slice(0, 5).join("; ")}`);
    expect(counts.refused).toBe(0);
    expect(counts.ok).toBeGreaterThan(100);
    expect(existsSync(sock)).toBe(true); // the socket is systemd's: an orchestrator that stops leaves it
    expect(notified).toContain("STOPPING=1\n");
  }, 90_000);
});
