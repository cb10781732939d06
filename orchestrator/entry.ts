/**
 * The one place that assembles the orchestrator process: the socket-directory lock, a reload's
 * hand-over, the front door with its admin socket and probe port, sd-notify and its status line,
 * and the signals. `aip up`, the agency that `aip lsp`/`aip mcp` embed, and the benchmarks all start
 * the server through `startAgency`, so what a user runs is what the tests and benchmarks run.
 */
import type { Server } from "node:http";
import { dirname } from "node:path";
import { ensureSafeDirectory } from "../protocol/util/safe-dir.js";
import type { AgencyConfig } from "./core/config.js";
import { lockSocketDir } from "./lifecycle/lock.js";
import { inheritedHandover, signalReady, startSuccessor } from "./lifecycle/reload.js";
import type { Orchestrator, OrchestratorDeps } from "./orchestrator.js";

export { LockedError } from "./lifecycle/lock.js";
export { UnsafeDirectoryError } from "../protocol/util/safe-dir.js";

export interface AgencyOptions {
  /** What the orchestrator is built with (log destination, pool sizing, transport, …). */
  deps?: OrchestratorDeps;
  /**
   * The process is the agency (`aip up`, a benchmark's orchestrator): a reload's hand-over and the
   * systemd variables are read from the environment, and SIGTERM/SIGINT stop it (SIGHUP reloads in
   * embedded mode, SIGUSR1 checks every agent). Off for an agency embedded in another program.
   */
  ownProcess?: boolean;
  /** Serve the owner-only admin socket (default true). */
  admin?: boolean;
}

export interface RunningAgency {
  readonly orchestrator: Orchestrator;
  /** "name@version:state" for every agent, as the ready line shows it. */
  readonly agents: string;
  /** The descriptor inherited from systemd or a reload, when the front door listens on one. */
  readonly inheritedFd?: { fd: number; from: string };
  /** Stop serving, stop every agent, release the lock; idempotent. */
  stop(reason: string): Promise<void>;
  /** Settles once the agency has stopped (a signal, a reload's hand-over, or `stop`). */
  readonly stopped: Promise<void>;
}

/**
 * The directories the agency keeps state and sockets in, created owner-only where missing: each must be
 * owned by this user (or root) and writable by no one else, or someone else could plant a symlink or a
 * socket in it. Throws UnsafeDirectoryError naming the path and the fix (docs/security.md, "Safe directories").
 */
export function checkDirectories(config: AgencyConfig): void {
  const dirs = new Map<string, [string, number]>([
    [config.stateDir, ["state_dir", 0o700]],
    [config.agentSocketDir, ["agent_socket_dir", 0o700]],
  ]);
  const sockets: [string, string | undefined][] = [
    ["socket", config.socket],
    ["admin_socket", config.adminSocket],
    ...config.agents.filter((a) => a.enabled).map((a): [string, string] => [`agents[${a.name}].socket`, a.socket]),
  ];
  for (const [what, socket] of sockets)
    if (socket !== undefined && !dirs.has(dirname(socket))) dirs.set(dirname(socket), [`${what}'s directory`, 0o750]);
  for (const [dir, [what, mode]] of dirs) ensureSafeDirectory(dir, what, mode);
}

/**
 * Start the agency: take the lock, start the orchestrator (vetting and starting its agents), then
 * listen. Throws `LockedError` when another orchestrator holds the agent socket directory, and the
 * start's error (after cleaning up) when an agent or a socket cannot be had.
 */
export async function startAgency(config: AgencyConfig, options: AgencyOptions = {}): Promise<RunningAgency> {
  const own = options.ownProcess ?? false;
  // The lock comes first, before the orchestrator's modules load: a second agency on the same
  // agent sockets says so at once and vets nothing. A reload's successor (a child of the running
  // orchestrator, handed its socket) takes the lock over from its parent.
  const handover = own ? inheritedHandover(process.env) : { adopt: [], readyFd: undefined };
  checkDirectories(config);
  lockSocketDir(config.agentSocketDir, handover.readyFd !== undefined ? process.ppid : undefined);
  const { listenAdmin, listenFrontDoor, listenHealthPort } = await import("./frontdoor.js");
  const { Orchestrator } = await import("./orchestrator.js");
  const { SdNotifier, inheritedListenFd } = await import("./lifecycle/sd-daemon.js");
  const orchestrator = new Orchestrator(config, { ...options.deps, adopt: handover.adopt });
  const log = orchestrator.log;
  // Read (and remove) the systemd variables before any agent starts: they are this process's alone.
  const notifier = own ? SdNotifier.fromEnv(process.env, log) : undefined;
  const listenFd = own ? inheritedListenFd(process.env) : undefined;
  let server: Awaited<ReturnType<typeof listenFrontDoor>> | undefined;
  let adminServer: Awaited<ReturnType<typeof listenAdmin>> | undefined;
  let healthServer: Server | undefined;
  let statusTimer: NodeJS.Timeout | undefined;
  let stopping: Promise<void> | undefined;
  let settle!: () => void;
  const stopped = new Promise<void>((resolve) => (settle = resolve));
  const listeners: [NodeJS.Signals, () => void][] = [];

  const stop = (reason: string): Promise<void> =>
    (stopping ??= (async () => {
      log.info({ event: "shutdown", signal: reason }, "stopping the agency");
      clearInterval(statusTimer);
      for (const [signal, fn] of listeners) process.off(signal, fn);
      notifier?.stopping(`stopping (${reason})`);
      await server?.close(config.limits.shutdown_grace_ms);
      await adminServer?.close(config.limits.shutdown_grace_ms);
      healthServer?.close();
      await orchestrator.stop();
      await notifier?.close();
      log.info({ event: "stopped" }, "agency stopped");
      settle();
    })());

  const reload = (): void => {
    if (stopping || !server) return;
    if (config.mode !== "embedded") {
      log.warn(
        { event: "reload_ignored" },
        "SIGHUP reloads in embedded mode only (under systemd: systemctl restart; the socket unit holds the clients)",
      );
      return;
    }
    const fd = server.listeningFd;
    if (fd === undefined) return;
    reloading = true;
    log.info({ event: "reload_requested", signal: "SIGHUP" }, "reload: starting a new orchestrator on this socket");
    healthServer?.close();
    const handoffs = orchestrator.processes.handoffs();
    // The admin socket is not handed over: the successor opens its own (admin calls wait out the reload).
    const admin = adminServer;
    adminServer = undefined;
    void (admin?.close(0) ?? Promise.resolve())
      .then(() => startSuccessor(fd, handoffs, config.limits.start_timeout_ms * 2))
      .then(
        (pid) => {
          log.info(
            { event: "reload_handed_over", successor_pid: pid, agents: handoffs.map((h) => h.name) },
            `reload: orchestrator ${pid} serves now; draining`,
          );
          orchestrator.processes.release();
          server!.handOver();
          void stop("SIGHUP");
        },
        (err: Error) => {
          reloading = false;
          orchestrator.processes.resumeHandoffs(handoffs);
          log.error({ event: "reload_failed", err: err.message }, `reload failed, still serving: ${err.message}`);
          if (options.admin !== false)
            void listenAdmin(orchestrator).then(
              (a) => (adminServer = a),
              () => undefined,
            );
          if (config.healthPort !== undefined)
            void listenHealthPort(orchestrator, config.healthPort).then(
              (h) => (healthServer = h),
              () => undefined,
            );
        },
      );
  };
  let reloading = false;
  let started = false;
  let reloadAsked = false;

  if (own) {
    // `on`, not `once`: execa's exit hook re-raises a signal that has no other listener left.
    listeners.push(
      ["SIGTERM", () => void stop("SIGTERM")],
      ["SIGINT", () => void stop("SIGINT")],
      // SIGHUP (`aip reload`), embedded mode: a successor takes the socket and the agents, then this one stops.
      // A SIGHUP during the start waits for it: until the admin socket is up, a successor would find it
      // taken and fail.
      ["SIGHUP", () => (started ? reloading || reload() : (reloadAsked = true))],
      [
        "SIGUSR1",
        () => {
          log.info({ event: "health_check_requested", signal: "SIGUSR1" }, "health check now");
          void orchestrator.checkNow();
        },
      ],
    );
    for (const [signal, fn] of listeners) process.on(signal, fn);
  }

  try {
    notifier?.status(`starting: registering ${config.agents.filter((a) => a.enabled).length} agents`);
    await orchestrator.start();
    // An inherited socket is accepted on only now: until every agent is registered, clients wait in
    // its backlog rather than being answered "no route".
    server = await listenFrontDoor(orchestrator, listenFd);
    if (options.admin !== false) adminServer = await listenAdmin(orchestrator);
    signalReady(handover.readyFd);
    if (config.healthPort !== undefined) healthServer = await listenHealthPort(orchestrator, config.healthPort);
  } catch (err) {
    log.error({ event: "start_failed", err: (err as Error).message }, (err as Error).message);
    for (const [signal, fn] of listeners) process.off(signal, fn);
    await server?.close(0);
    await adminServer?.close(0);
    await orchestrator.stop();
    await notifier?.close();
    throw err;
  }
  started = true;
  if (reloadAsked) {
    log.info({ event: "reload_deferred" }, "reload: asked for during the start, starting it now");
    reload();
  }

  const { statusWord } = await import("./request/status.js");
  const agents = orchestrator.agents.map((a) => `${a.name}@${a.version}:${statusWord(a.snapshot())}`).join(" ");
  log.info(
    {
      event: "ready",
      socket: config.socket,
      mode: config.mode,
      agents,
      ...(listenFd !== undefined ? { inherited_fd: listenFd.fd, inherited_from: listenFd.from } : {}),
    },
    "agency ready",
  );
  if (notifier) {
    const summary = (): string => {
      const r = orchestrator.readyz();
      const serving = orchestrator.agents.filter((a) => a.role !== "retained");
      const missing = (r.body.unavailable_actions as string[] | undefined) ?? [];
      return `${r.httpStatus === 200 ? "ready" : "not ready"}: ${serving.filter((a) => a.available).length}/${serving.length} agents available${missing.length > 0 ? `; no agent for ${missing.join(", ")}` : ""}`;
    };
    notifier.ready(summary());
    statusTimer = setInterval(() => notifier.status(summary()), Math.min(config.limits.health_interval_ms, 5000));
    statusTimer.unref();
  }
  return {
    orchestrator,
    agents,
    ...(listenFd !== undefined ? { inheritedFd: { fd: listenFd.fd, from: listenFd.from } } : {}),
    stop,
    stopped,
  };
}
