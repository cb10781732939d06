/**
 * The systemd service protocol for the orchestrator (docs/operations.md "Operating under systemd"): socket activation
 * (`LISTEN_FDS`, sd_listen_fds(3)) and readiness/watchdog/status notifications (`NOTIFY_SOCKET`, sd_notify(3)).
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Logger } from "../../protocol/util/log.js";
import type { EnvName } from "../../protocol/util/env.js";

/** sd_listen_fds(3): passed descriptors start at 3. */
export const SD_LISTEN_FDS_START = 3;

/** Variable naming the listening descriptor a reloading orchestrator hands to its successor (embedded mode). */
export const HANDOVER_FD_VAR = "AIP_LISTEN_FD" satisfies EnvName;

/**
 * The listening socket this process was given, if any: systemd's (`LISTEN_PID` is this process and
 * `LISTEN_FDS` ≥ 1: the first, fd 3) or a reload's (`AIP_LISTEN_FD`). The variables are removed from
 * `env`, so the agents this process starts do not believe the socket is theirs.
 */
export function inheritedListenFd(
  env: NodeJS.ProcessEnv = process.env,
  pid = process.pid,
): { fd: number; from: "systemd" | "reload" } | undefined {
  const systemd = env.LISTEN_PID === String(pid) && Number(env.LISTEN_FDS) >= 1;
  const handover = /^\d+$/.test(env[HANDOVER_FD_VAR] ?? "") ? Number(env[HANDOVER_FD_VAR]) : undefined;
  for (const v of ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", HANDOVER_FD_VAR]) delete env[v];
  if (systemd) return { fd: SD_LISTEN_FDS_START, from: "systemd" };
  return handover !== undefined ? { fd: handover, from: "reload" } : undefined;
}

/**
 * sd_notify(3) messages to `$NOTIFY_SOCKET`. Node has no datagram Unix sockets, so a helper process
 * (socat, sending each write as one datagram) carries them: it runs in the unit's cgroup for as long as
 * the orchestrator does, which `NotifyAccess=all` accepts. Without socat each message goes through
 * `systemd-notify` instead.
 */
export class SdNotifier {
  private helper: ChildProcess | undefined;
  private fallback = false;
  /** Written to a helper that has not started yet: re-sent through systemd-notify if it cannot start. */
  private unsent: string[] = [];
  private watchdogTimer: NodeJS.Timeout | undefined;
  private lastStatus = "";

  private constructor(
    readonly socket: string,
    private readonly watchdogUsec: number | undefined,
    private readonly log: Logger | undefined,
  ) {}

  /** A notifier when systemd (or a test) set `NOTIFY_SOCKET`; the variables are removed from `env`. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env, log?: Logger, pid = process.pid): SdNotifier | undefined {
    const socket = env.NOTIFY_SOCKET;
    const usec = Number(env.WATCHDOG_USEC);
    const watchdog =
      Number.isFinite(usec) && usec > 0 && (env.WATCHDOG_PID === undefined || env.WATCHDOG_PID === String(pid))
        ? usec
        : undefined;
    for (const v of ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"]) delete env[v];
    return socket ? new SdNotifier(socket, watchdog, log) : undefined;
  }

  /** Send `KEY=VALUE` assignments (one datagram); values must not hold newlines. */
  send(fields: Record<string, string | number>): void {
    const text = Object.entries(fields)
      .map(([k, v]) => `${k}=${String(v).replace(/\n/g, " ")}\n`)
      .join("");
    if (this.fallback) return this.viaSystemdNotify(text);
    if (!this.helper) {
      this.helper = this.startHelper();
      this.unsent = [];
    }
    if (this.helper.pid === undefined) this.unsent.push(text);
    this.helper.stdin?.write(text);
  }

  /** READY=1 with a status line; starts the watchdog pings when systemd asked for them. */
  ready(status: string): void {
    this.lastStatus = status;
    this.send({ READY: 1, STATUS: status, MAINPID: process.pid });
    if (this.watchdogUsec !== undefined && !this.watchdogTimer) {
      // Half the interval, from the event loop: a stuck loop stops the pings and systemd restarts us.
      const everyMs = Math.max(100, Math.floor(this.watchdogUsec / 2000));
      this.watchdogTimer = setInterval(() => this.send({ WATCHDOG: 1 }), everyMs);
      this.watchdogTimer.unref();
    }
  }

  /** STATUS= when it changed since the last one. */
  status(status: string): void {
    if (status === this.lastStatus) return;
    this.lastStatus = status;
    this.send({ STATUS: status });
  }

  stopping(status = "stopping"): void {
    this.lastStatus = status;
    this.send({ STOPPING: 1, STATUS: status });
  }

  /** Stop the pings and let the helper send what it has, then exit. */
  close(): Promise<void> {
    clearInterval(this.watchdogTimer);
    const helper = this.helper;
    this.helper = undefined;
    if (!helper || helper.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => helper.kill("SIGKILL"), 2000);
      helper.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      helper.stdin?.end();
    });
  }

  private startHelper(): ChildProcess {
    const address = this.socket.startsWith("@")
      ? `ABSTRACT-SENDTO:${this.socket.slice(1)}`
      : `UNIX-SENDTO:${this.socket}`;
    const child = spawn("socat", ["-u", "STDIN", address], { stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-500)));
    child.stdin?.on("error", () => undefined);
    child.once("spawn", () => (this.unsent = []));
    child.once("error", (err: NodeJS.ErrnoException) => {
      this.log?.warn(
        { event: "sd_notify_helper", err: err.message },
        "socat not found: sd_notify messages go through systemd-notify (install socat)",
      );
      this.fallback = true;
      this.helper = undefined;
      for (const text of this.unsent.splice(0)) this.viaSystemdNotify(text);
    });
    child.once("exit", (code) => {
      if (this.helper === child) {
        this.helper = undefined;
        if (code !== 0)
          this.log?.error(
            { event: "sd_notify_failed", code, stderr },
            `sd_notify helper exited ${code}: ${stderr.trim()}`,
          );
      }
    });
    return child;
  }

  private viaSystemdNotify(text: string): void {
    const args = text.trim().split("\n");
    const ready = args.includes("READY=1");
    const child = spawn("systemd-notify", [...(ready ? ["--ready"] : []), ...args.filter((a) => a !== "READY=1")], {
      stdio: "ignore",
      env: { ...process.env, NOTIFY_SOCKET: this.socket },
    });
    child.once("error", (err) =>
      this.log?.error({ event: "sd_notify_failed", err: err.message }, `sd_notify failed: ${err.message}`),
    );
  }
}
