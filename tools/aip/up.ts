/** `aip up`: run the agency (orchestrator + supervised agents) until SIGTERM/SIGINT. */
import type { Server } from "node:http";
import { relative } from "node:path";
import { ConfigError, loadConfig } from "../../orchestrator/core/config.js";
import { LockedError, lockSocketDir } from "../../orchestrator/lifecycle/lock.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";

export const up: Command = {
  summary: "run the agency: the orchestrator and (embedded mode) its agents",
  usage: `Usage: aip up [--config FILE] [--socket PATH] [--mode embedded|systemd] [--health-port N] [--log FILE]

Starts the orchestrator on its Unix socket. In embedded mode (default) it starts and
supervises every enabled agent in the config; in systemd mode it connects to the
agents' sockets. Prints the socket path and a curl line once ready.

  --config FILE      agency config (default: $AIP_CONFIG or manifests/agency.json)
  --socket PATH      orchestrator socket (default from config: ./run/aip.sock; env AIP_SOCKET)
  --mode MODE        embedded or systemd (env AIP_MODE)
  --health-port N    also serve the probes (GET /livez, /readyz, /healthz, /metrics) on 127.0.0.1:N (env AIP_HEALTH_PORT)
  --log FILE         write JSON Lines logs to FILE instead of stdout (env AIP_LOG_FILE)

The admin API (canary control, forced health checks) is served on a separate owner-only
socket (config admin_socket, default <socket>.admin.sock; env AIP_ADMIN_SOCKET).
A second orchestrator on the same agent socket directory exits 1 at once.

Signals: SIGTERM/SIGINT stop everything (no orphan process, no socket file left);
SIGUSR1 health-checks every agent now and restarts any that does not answer.`,
  async run(argv) {
    const { flags, positionals } = parseArgs(argv, ["config", "socket", "mode", "health-port", "log"]);
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
    const env = { ...process.env };
    if (typeof flags.socket === "string") env.AIP_SOCKET = flags.socket;
    if (typeof flags.mode === "string") env.AIP_MODE = flags.mode;
    if (typeof flags["health-port"] === "string") env.AIP_HEALTH_PORT = flags["health-port"];
    let config;
    try {
      config = loadConfig(typeof flags.config === "string" ? flags.config : undefined, env);
    } catch (err) {
      if (err instanceof ConfigError) {
        console.error(`aip up: ${err.message}`);
        return EXIT.usage;
      }
      throw err;
    }
    // The lock comes first, before the orchestrator's modules load: a second agency on the same
    // agent sockets says so at once and vets nothing. A reload's successor (a child of the running
    // orchestrator, handed its socket) takes the lock over from its parent.
    const { inheritedHandover, signalReady, startSuccessor } = await import("../../orchestrator/lifecycle/reload.js");
    const handover = inheritedHandover(process.env);
    try {
      lockSocketDir(config.agentSocketDir, handover.readyFd !== undefined ? process.ppid : undefined);
    } catch (err) {
      if (!(err instanceof LockedError)) throw err;
      console.error(`aip up: ${err.message}`);
      return EXIT.aipError;
    }
    const { listenAdmin, listenFrontDoor, listenHealthPort } = await import("../../orchestrator/frontdoor.js");
    const { Orchestrator } = await import("../../orchestrator/orchestrator.js");
    const { SdNotifier, inheritedListenFd } = await import("../../orchestrator/lifecycle/sd-daemon.js");
    const logFile = typeof flags.log === "string" ? flags.log : process.env.AIP_LOG_FILE;
    const orchestrator = new Orchestrator(config, { logDestination: logFile ?? 1, adopt: handover.adopt });
    const log = orchestrator.log;
    // Read (and remove) the systemd variables before any agent starts: they are this process's alone.
    const notifier = SdNotifier.fromEnv(process.env, log);
    const listenFd = inheritedListenFd(process.env);
    let healthServer: Server | undefined;
    let statusTimer: NodeJS.Timeout | undefined;
    const stop = async (signal: string): Promise<void> => {
      log.info({ event: "shutdown", signal }, "stopping the agency");
      clearInterval(statusTimer);
      notifier?.stopping(`stopping (${signal})`);
      await server?.close(config.limits.shutdown_grace_ms);
      await adminServer?.close(config.limits.shutdown_grace_ms);
      healthServer?.close();
      await orchestrator.stop();
      await notifier?.close();
      log.info({ event: "stopped" }, "agency stopped");
    };
    let server: Awaited<ReturnType<typeof listenFrontDoor>> | undefined;
    let adminServer: Awaited<ReturnType<typeof listenAdmin>> | undefined;
    let stopping: Promise<void> | undefined;
    const done = new Promise<void>((resolve) => {
      // `on`, not `once`: execa's exit hook re-raises a signal that has no other listener left.
      const onSignal = (signal: string): void => {
        stopping ??= stop(signal).then(resolve);
      };
      process.on("SIGTERM", () => onSignal("SIGTERM"));
      process.on("SIGINT", () => onSignal("SIGINT"));
      // SIGHUP (`aip reload`), embedded mode: a successor takes the socket and the agents, then this one stops.
      let reloading = false;
      process.on("SIGHUP", () => {
        if (reloading || stopping || !server) return;
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
              stopping ??= stop("SIGHUP").then(resolve);
            },
            (err: Error) => {
              reloading = false;
              orchestrator.processes.resumeHandoffs(handoffs);
              log.error({ event: "reload_failed", err: err.message }, `reload failed, still serving: ${err.message}`);
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
      });
    });
    process.on("SIGUSR1", () => {
      log.info({ event: "health_check_requested", signal: "SIGUSR1" }, "health check now");
      void orchestrator.checkNow();
    });
    try {
      notifier?.status(`starting: registering ${config.agents.filter((a) => a.enabled).length} agents`);
      await orchestrator.start();
      // An inherited socket is accepted on only now: until every agent is registered, clients wait in
      // its backlog rather than being answered "no route".
      server = await listenFrontDoor(orchestrator, listenFd);
      adminServer = await listenAdmin(orchestrator);
      signalReady(handover.readyFd);
      if (config.healthPort !== undefined) healthServer = await listenHealthPort(orchestrator, config.healthPort);
    } catch (err) {
      log.error({ event: "start_failed", err: (err as Error).message }, (err as Error).message);
      console.error(`aip up: ${(err as Error).message}`);
      await server?.close(0);
      await orchestrator.stop();
      await notifier?.close();
      return EXIT.aipError;
    }
    const shown = relative(process.cwd(), config.socket);
    const sock = shown.startsWith("..") ? config.socket : `./${shown}`;
    const ready = orchestrator.agents.map((a) => `${a.name}@${a.version}:${a.state}`).join(" ");
    log.info(
      {
        event: "ready",
        socket: config.socket,
        mode: config.mode,
        agents: ready,
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
    // With logs on stdout the banner goes to stderr, keeping stdout pure JSON Lines.
    // The example names an action this config serves: echo where the test agent runs, else summarize.
    const actions = new Set(orchestrator.agents.flatMap((a) => a.manifest.capabilities));
    const example = actions.has("echo") ? "echo" : actions.has("summarize") ? "summarize" : undefined;
    const source = example === "summarize" ? "export const a = 1;" : "a\\nb";
    const banner =
      `agency ready on ${sock} (${config.mode}; ${ready})\n` +
      (example
        ? `  try: curl --unix-socket ${sock} http://aip/v1/invoke -d '{"action":"${example}","context":{"source_code":"${source}"},"constraints":{}}'\n`
        : `  try: curl --unix-socket ${sock} http://aip/v1/agents\n`);
    (logFile ? process.stdout : process.stderr).write(banner);
    await done;
    return EXIT.ok;
  },
};
