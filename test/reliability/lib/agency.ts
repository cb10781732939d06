/** `aip up` as a real process over a real agent-dummy, for the reliability suites: start, restart, inspect, stop. */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { adminSocketFor } from "../../../orchestrator/core/config.js";
import { httpRequest, waitForSocket } from "../../../protocol/transport/client.js";
import { DIST, pidAlive, tempDir, writeDummyConfig } from "../../helpers.js";

export const AIP = join(DIST, "scripts/aip.js");

export interface AgentHealth {
  status: string;
  pid: number | null;
  restarts: number;
}

export interface RealAgency {
  dir: string;
  socket: string;
  agentSocket: string;
  logFile: string;
  process(): ChildProcess;
  /** Start (again) `aip up` on the same config; resolves when every agent is healthy. */
  start(): Promise<void>;
  /** SIGTERM and wait for the exit (graceful: in-flight requests get shutdown_grace_ms). */
  terminate(): Promise<void>;
  /**
   * Reload (SIGHUP, as `aip reload`): a new orchestrator on the same socket, the agents kept; resolves with
   * its pid once it serves, and when the SIGHUP was sent (after a /healthz read, which can wait under load).
   */
  reload(): Promise<{ pid: number; signalledAt: number }>;
  health(): Promise<{ pid: number; agents: Record<string, AgentHealth> }>;
  /**
   * /healthz read again until it answers (each read times out at 5 s; 200 busy clients on two loaded cores
   * delayed one past that), for reads the harness needs before a fault: a missed one is not the fault's.
   */
  healthPatiently(withinMs?: number): Promise<{ pid: number; agents: Record<string, AgentHealth> }>;
  /** Adopt the orchestrator now serving the socket (after an `aip reload` run outside this harness) for cleanup. */
  adoptServing(): Promise<void>;
  /** Stop everything (SIGKILL if needed) and remove the temp directory. */
  cleanup(): Promise<void>;
}

/**
 * Write a config for one agent-dummy with `limits` (and `extra` config keys, `agents` included), and start
 * `aip up` on it. With `activation`, systemd's side is played as in production: systemd-socket-activate
 * creates and holds the listening socket (as aip-orchestrator.socket does) and a shell loop starts `aip up`
 * again whenever it exits (Restart=always); each orchestrator inherits the socket as fd 3.
 */
export async function startRealAgency(
  limits: Record<string, unknown> = {},
  extra: (dir: string) => Record<string, unknown> = () => ({}),
  options: { activation?: boolean } = {},
): Promise<RealAgency> {
  const t = tempDir("aipr-");
  const socket = join(t.dir, "aip.sock");
  const agentSocket = join(t.dir, "agents", "dummy.sock");
  const logFile = join(t.dir, "aip.log");
  const config = writeDummyConfig(t.dir, { limits, ...extra(t.dir) });
  /** Under activation: the loop restarting `aip up` ends when this file exists. */
  const stopFile = join(t.dir, "stop");
  let child: ChildProcess | undefined;
  const exited = (c: ChildProcess): boolean => c.exitCode !== null || c.signalCode !== null;
  const agentPids = new Set<number>();
  /** Orchestrators started by a reload: no child of ours, ended by pid. */
  const successors = new Set<number>();
  const health = async (): Promise<{ pid: number; agents: Record<string, AgentHealth> }> => {
    // Read on the admin socket: on the front door it queues behind 200 clients' reconnects, which under load
    // kept a reload run's reads waiting for a minute (docs/reliability.md).
    const h = JSON.parse((await httpRequest(adminSocketFor(socket), { path: "/healthz", timeoutMs: 5000 })).body) as {
      pid: number;
      agents: Record<string, AgentHealth>;
    };
    for (const a of Object.values(h.agents)) if (a.pid) agentPids.add(a.pid);
    // Under activation no orchestrator is our child: each one seen is ended by pid.
    if (options.activation) successors.add(h.pid);
    return h;
  };
  const healthPatiently = async (withinMs = 60_000): Promise<{ pid: number; agents: Record<string, AgentHealth> }> => {
    for (const end = Date.now() + withinMs; ;) {
      try {
        return await health();
      } catch (err) {
        if (Date.now() > end) throw new Error(`no /healthz answer in ${withinMs} ms: ${(err as Error).message}`);
        // A refused or reset read fails at once: poll, as `until` does, rather than spin.
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  const agency: RealAgency = {
    dir: t.dir,
    socket,
    agentSocket,
    logFile,
    process: () => child!,
    async start() {
      const env = { ...process.env, AIP_LOG_LEVEL: "info" };
      const up = `${process.execPath} ${AIP} up --config ${config} --log ${logFile}`;
      const c = options.activation
        ? spawn(
            "systemd-socket-activate",
            ["-l", socket, "sh", "-c", `while [ ! -e ${stopFile} ]; do sh -c 'export LISTEN_PID=$$; exec ${up}'; done`],
            { stdio: ["ignore", "ignore", "pipe"], env },
          )
        : spawn(process.execPath, [AIP, "up", "--config", config, "--log", logFile], {
            stdio: ["ignore", "ignore", "pipe"],
            env,
          });
      child = c;
      c.stderr!.resume();
      // Generous: a start vets its agents first, which on two busy cores takes tens of seconds.
      await waitForSocket(socket, 120_000, () => !exited(c));
      const end = Date.now() + 60_000;
      const allHealthy = (h: { agents: Record<string, AgentHealth> } | undefined): boolean =>
        h !== undefined &&
        Object.values(h.agents).length > 0 &&
        Object.values(h.agents).every((a) => a.status === "healthy");
      while (!allHealthy(await health().catch(() => undefined))) {
        if (Date.now() > end || exited(c)) {
          const tail = readFileSync(logFile, "utf8")
            .split("\n")
            .filter((l) => !l.includes('"event":"request"'))
            .slice(-8)
            .join("\n");
          throw new Error(
            `aip up did not become healthy (exit ${c.exitCode ?? c.signalCode ?? "none"}); log:\n${tail}`,
          );
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async terminate() {
      const c = child!;
      if (exited(c)) return;
      const gone = new Promise((r) => c.once("exit", r));
      c.kill("SIGTERM");
      await gone;
    },
    health,
    healthPatiently,
    async reload() {
      // What `aip reload` does (SIGHUP, then the new pid on the socket), with the patience of a loaded machine.
      // A /healthz read may time out under the load (5 s): it is read again.
      const pidNow = (fallback: number): Promise<number> =>
        health().then(
          (h) => h.pid,
          () => fallback,
        );
      const old = (await healthPatiently()).pid;
      process.kill(old, "SIGHUP");
      const signalledAt = Date.now();
      const end = signalledAt + 120_000;
      for (;;) {
        const pid = await pidNow(old);
        if (pid !== old) {
          successors.add(pid);
          return { pid, signalledAt };
        }
        if (Date.now() > end) throw new Error(`no new orchestrator 120 s after SIGHUP to ${old}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async adoptServing() {
      const pid = (await health()).pid;
      if (pid !== child?.pid) successors.add(pid);
    },
    async cleanup() {
      if (options.activation) writeFileSync(stopFile, "");
      for (const pid of successors) {
        if (!pidAlive(pid)) continue;
        process.kill(pid, "SIGTERM");
        const end = Date.now() + 10_000;
        while (pidAlive(pid) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
        if (pidAlive(pid)) process.kill(pid, "SIGKILL");
      }
      if (child && !exited(child)) {
        const c = child;
        const gone = new Promise((r) => c.once("exit", r));
        c.kill("SIGTERM");
        const timer = setTimeout(() => c.kill("SIGKILL"), 10_000);
        await gone;
        clearTimeout(timer);
      }
      // An agent left behind by a killed orchestrator (or stopped with SIGSTOP) is ours to end.
      for (const pid of agentPids) if (pidAlive(pid)) process.kill(pid, "SIGKILL");
      if (!process.env.AIP_KEEP_TMP) t.cleanup();
    },
  };
  try {
    await agency.start();
  } catch (err) {
    // A start that failed (not healthy in time on a loaded machine) leaves no process behind.
    await agency.cleanup();
    throw err;
  }
  return agency;
}

export { rssMiB } from "../../../orchestrator/core/procstat.js";
export { pidAlive };

/** Full run (`npm run test:reliability`) or the short one inside `npm test`. */
export const FULL = process.env.AIP_RELIABILITY === "full";
