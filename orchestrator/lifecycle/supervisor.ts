/**
 * Embedded supervisor: starts an agent with `--listen`, waits until it is ready, drains its output
 * into the log, restarts it on exit with exponential backoff, and gives up on a crash loop.
 */
import { execa } from "execa";
import { Socket } from "node:net";
import { lstatSync, renameSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { waitForSocket } from "../../protocol/transport/client.js";
import { removeSocketFile } from "../../protocol/transport/socket-file.js";
import type { Logger } from "../../protocol/util/log.js";
import { processStats } from "../core/procstat.js";
import type { ProbeResult } from "../core/health.js";

export interface ChildHandle {
  pid: number | undefined;
  stdout: Readable;
  stderr: Readable;
  exited: Promise<{ code: number | null; signal: string | null }>;
  kill(signal: NodeJS.Signals): void;
  /** Stop this process waiting for the child (after a reload handed it over). */
  unref?(): void;
}

/** Starts a process; injectable so supervisor logic can be driven by tests. */
export type Spawner = (command: string, args: string[], env: Record<string, string>) => ChildHandle;

/**
 * Agent processes this orchestrator would leave behind if it exited: killed from its "exit" handler.
 * (Not execa's `cleanup`, which cannot let go of a process: a reload hands the agents to its successor.)
 */
const owned = new Set<ChildHandle>();
process.on("exit", () => {
  for (const c of owned) c.kill("SIGTERM");
});

export const execaSpawner: Spawner = (command, args, env) => {
  const child = execa(command, args, {
    env,
    extendEnv: false, // the whole environment is built by agent-env.ts
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    reject: false,
    cleanup: false,
    buffer: false,
    detached: false,
  });
  const handle: ChildHandle = {
    pid: child.pid,
    stdout: child.stdout,
    stderr: child.stderr,
    exited: child.then((r) => ({ code: r.exitCode ?? null, signal: r.signal ?? null })),
    kill: (signal) => {
      child.kill(signal);
    },
    unref: () => child.unref(),
  };
  owned.add(handle);
  void handle.exited.then(() => owned.delete(handle));
  return handle;
};

/** Stop killing `child` when this process exits (it was handed to a successor). */
export function disown(child: ChildHandle): void {
  owned.delete(child);
}

/**
 * An agent process another orchestrator started and handed over (a reload): its output pipes arrive
 * as inherited descriptors, and it is not our child, so its end is seen as the end of its stdout plus
 * the pid gone (polled; there is no waitpid for a non-child).
 */
export function adoptedChild(pid: number, stdoutFd: number, stderrFd: number): ChildHandle {
  const stdout = new Socket({ fd: stdoutFd, readable: true, writable: false });
  const stderr = new Socket({ fd: stderrFd, readable: true, writable: false });
  const alive = (): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    const check = (): void => {
      if (!alive()) resolve({ code: null, signal: null });
      else setTimeout(check, 20).unref();
    };
    stdout.once("close", check);
  });
  const handle: ChildHandle = { pid, stdout, stderr, exited, kill: (signal) => alive() && process.kill(pid, signal) };
  owned.add(handle);
  void exited.then(() => owned.delete(handle));
  return handle;
}

/** A start that uses little CPU (a sleeping or blocked process) is given up after this many start timeouts of wall time. */
export const START_WALL_FACTOR = 4;

/**
 * Wait until a starting agent accepts on `path`. The start timeout is counted in the process's own CPU
 * time (docs/operations.md "Supervisor"): on a busy host a start takes longer without being wrong, and
 * the verdict must not flip with the load. A process that uses little CPU and still does not listen is
 * given up after START_WALL_FACTOR × the timeout of wall time.
 */
export async function waitForStart(
  path: string,
  pid: number | undefined,
  timeoutMs: number,
  alive: () => boolean,
): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      await waitForSocket(path, Math.min(timeoutMs, 500), alive);
      return;
    } catch (err) {
      if (!alive()) throw err;
      const spent = startBudgetSpent(pid, started, timeoutMs);
      if (spent) throw new Error(`${path} did not accept connections ${spent}`);
    }
  }
}

/**
 * Wait until a started agent's /healthz answers 200. A probe that timed out is repeated while the agent is
 * within its start budget, counted as waitForStart counts it: a process just started on a loaded host may
 * answer its first request late, and that is not a failed start. Any other failure is the verdict at once.
 */
export async function waitForReady(
  ready: (socketPath: string) => Promise<ProbeResult>,
  path: string,
  pid: number | undefined,
  timeoutMs: number,
  alive: () => boolean,
): Promise<void> {
  const started = Date.now();
  for (;;) {
    const r = await ready(path);
    if (r.ok) return;
    const spent = r.timedOut && alive() ? startBudgetSpent(pid, started, timeoutMs) : "";
    if (!r.timedOut || !alive() || spent)
      throw new Error(`agent accepted connections but /healthz did not answer${spent ? ` ${spent}` : ""}: ${r.error}`);
  }
}

/** Why a start that began at `started` has used up its budget; "" while it has not. */
function startBudgetSpent(pid: number | undefined, started: number, timeoutMs: number): string {
  const cpuMs = Math.round((pid === undefined ? 0 : (processStats(pid)?.cpuSeconds ?? 0)) * 1000);
  return startBudgetVerdict(cpuMs, Date.now() - started, timeoutMs);
}

/** The verdict on a start's budget: its own CPU time, or START_WALL_FACTOR × the timeout of wall time. */
export function startBudgetVerdict(cpuMs: number, wallMs: number, timeoutMs: number): string {
  if (cpuMs >= timeoutMs)
    return `after ${cpuMs} ms of the agent's CPU time (start_timeout_ms ${timeoutMs}; ${wallMs} ms of wall time)`;
  if (wallMs >= timeoutMs * START_WALL_FACTOR)
    return `within ${wallMs} ms (${START_WALL_FACTOR} × start_timeout_ms ${timeoutMs} of wall time; ${cpuMs} ms of the agent's CPU time)`;
  return "";
}

export interface SupervisorOptions {
  name: string;
  command: string[];
  socketPath: string;
  /** The agent's whole environment (agent-env.ts); nothing else is inherited. */
  env: Record<string, string>;
  log: Logger;
  spawner: Spawner;
  startTimeoutMs: number;
  restartInitialMs: number;
  restartMaxMs: number;
  crashLoopRestarts: number;
  crashLoopWindowMs: number;
  /** A failed agent is started again after this long, doubling at each failure up to failedRetryMaxMs. */
  failedRetryMs: number;
  failedRetryMaxMs: number;
  shutdownGraceMs: number;
  /** Readiness beyond "the socket accepts" (e.g. /healthz answers), probed on the given socket. */
  /** One readiness probe of a process listening on `socketPath` (its /healthz). */
  ready: (socketPath: string) => Promise<ProbeResult>;
  /**
   * Warm standby: a second process kept ready on this socket path; when the agent exits, the standby's
   * socket is renamed onto the agent's (an atomic rename), so it serves at once, and a new standby starts.
   */
  standbySocketPath?: string;
  /**
   * Start no standby until `releaseStandby()`: while the agency starts, a standby would take CPU from
   * the agents still starting, and it serves only a later restart.
   */
  holdStandby?: boolean;
  /** Lifecycle callbacks into the registry. */
  onState: (
    state: "starting" | "ready" | "exited" | "restarting" | "failed" | "stopped",
    info: { pid?: number | undefined; error?: string; retryInMs?: number },
  ) => void;
}

/** Keep the last lines an agent wrote, for last_error when it dies. */
class Tail {
  private lines: string[] = [];
  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > 5) this.lines.shift();
  }
  text(): string {
    return this.lines.join(" | ").slice(0, 500);
  }
}

export class Supervisor {
  private child: ChildHandle | undefined;
  private stopping = false;
  private restartTimes: number[] = [];
  private backoff: number;
  private readonly stderrTail = new Tail();
  private restartTimer: NodeJS.Timeout | undefined;
  private generation = 0;
  private standby: { child: ChildHandle; ready: boolean } | undefined;
  private standbyTimer: NodeJS.Timeout | undefined;
  private standbyFailures = 0;
  /** The inode of the socket a promoted standby serves on (renamed onto the agent's path). */
  private promotedIno: number | undefined;
  /** Given up on after a crash loop: waiting for the retry (or revive()). */
  private failed = false;
  private failedBackoff: number;
  private retryTimer: NodeJS.Timeout | undefined;
  /** When the current process became ready: one that served a whole crash-loop window resets the retry back-off. */
  private readyAt: number | undefined;
  private standbyHeld: boolean;

  constructor(private readonly o: SupervisorOptions) {
    this.backoff = o.restartInitialMs;
    this.failedBackoff = o.failedRetryMs;
    this.standbyHeld = o.holdStandby ?? false;
  }

  /** Let the warm standby start (at once when the agent is serving; else once it is ready). */
  releaseStandby(): void {
    if (!this.standbyHeld) return;
    this.standbyHeld = false;
    if (this.child && this.readyAt !== undefined && !this.standby) this.startStandby();
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The running process (its output pipes are what a reload hands over). */
  get current(): ChildHandle | undefined {
    return this.child;
  }

  /** Spawn and wait until ready; rejects with the reason if it exits or does not become ready in time. */
  async start(): Promise<void> {
    const [cmd, ...args] = this.o.command;
    return this.watch(this.o.spawner(cmd!, [...args, "--listen", this.o.socketPath], this.o.env));
  }

  /** Take over a process already serving the socket (handed over by a reload), then supervise it as our own. */
  adopt(child: ChildHandle): Promise<void> {
    return this.watch(child);
  }

  /** Let go of the process without stopping it: a successor supervises it now. */
  release(): ChildHandle | undefined {
    void this.stopStandby();
    const child = this.child;
    this.stopping = true;
    this.generation++;
    clearTimeout(this.restartTimer);
    clearTimeout(this.retryTimer);
    this.child = undefined;
    if (child) {
      disown(child);
      child.unref?.();
      child.stdout.destroy();
      child.stderr.destroy();
    }
    return child;
  }

  private async watch(child: ChildHandle): Promise<void> {
    this.stopping = false;
    const gen = ++this.generation;
    this.child = child;
    this.promotedIno = undefined; // a process it starts removes its own socket
    this.o.onState("starting", { pid: child.pid });
    this.drain(child.stdout, "stdout");
    this.drain(child.stderr, "stderr");
    let exited = false;
    void child.exited.then((r) => {
      exited = true;
      if (gen === this.generation) this.onExit(r);
    });
    try {
      await waitForStart(this.o.socketPath, child.pid, this.o.startTimeoutMs, () => !exited);
      await waitForReady(this.o.ready, this.o.socketPath, child.pid, this.o.startTimeoutMs, () => !exited);
    } catch (err) {
      if (!exited) child.kill("SIGKILL");
      throw new Error(
        `${this.o.name} did not become ready: ${(err as Error).message}${this.stderrTail.text() ? `; stderr: ${this.stderrTail.text()}` : ""}`,
      );
    }
    this.readyAt = Date.now();
    this.o.onState("ready", { pid: child.pid });
    if (!this.standby) this.startStandby();
  }

  /** Start the warm standby (when configured) and wait in the background until it is ready. */
  private startStandby(): void {
    const path = this.o.standbySocketPath;
    if (!path || this.stopping || this.standby || this.standbyHeld) return;
    const [cmd, ...args] = this.o.command;
    const child = this.o.spawner(cmd!, [...args, "--listen", path], this.o.env);
    const entry = { child, ready: false };
    this.standby = entry;
    this.drain(child.stdout, "stdout");
    this.drain(child.stderr, "stderr");
    let exited = false;
    void child.exited.then((r) => {
      exited = true;
      if (this.child === child) return; // promoted: its exit is the agent's (watched below)
      if (this.standby === entry) this.standby = undefined;
      if (this.stopping) return;
      // A standby that keeps dying is given up on: the agent still restarts the ordinary way.
      if (++this.standbyFailures >= 3) {
        this.o.log.warn(
          { event: "standby_failed", code: r.code, signal: r.signal },
          "warm standby keeps exiting; restarts are cold from now on",
        );
        return;
      }
      this.standbyTimer = setTimeout(() => this.startStandby(), this.o.restartInitialMs);
    });
    void waitForStart(path, child.pid, this.o.startTimeoutMs, () => !exited)
      .then(() => waitForReady(this.o.ready, path, child.pid, this.o.startTimeoutMs, () => !exited))
      .then(() => {
        if (this.standby === entry) {
          entry.ready = true;
          this.standbyFailures = 0;
          this.o.log.info({ event: "standby_ready", pid: child.pid }, "warm standby ready");
        } else if (!exited) child.kill("SIGKILL");
      })
      .catch(() => {
        if (!exited) child.kill("SIGKILL");
      });
  }

  /** The agent exited: put the ready standby in its place (rename its socket onto the agent's). */
  private promoteStandby(error: string): boolean {
    const s = this.standby;
    if (!s?.ready || this.stopping || !this.o.standbySocketPath) return false;
    try {
      renameSync(this.o.standbySocketPath, this.o.socketPath);
    } catch {
      return false;
    }
    // The promoted process removes, when it stops, the name it bound (the standby's): the agent's
    // name, which it serves on now, is this supervisor's to remove (only while it is this socket).
    try {
      this.promotedIno = lstatSync(this.o.socketPath).ino;
    } catch {
      this.promotedIno = undefined;
    }
    this.standby = undefined;
    const gen = ++this.generation;
    this.child = s.child;
    void s.child.exited.then((r) => {
      if (gen === this.generation) this.onExit(r);
    });
    this.readyAt = Date.now();
    this.o.onState("restarting", { error: `${error}; the warm standby (pid ${s.child.pid}) took over` });
    this.o.onState("ready", { pid: s.child.pid });
    this.startStandby();
    return true;
  }

  private drain(stream: Readable, name: "stdout" | "stderr"): void {
    // Continuous draining: a full 64 KiB pipe would block the agent.
    const rl = createInterface({ input: stream, crlfDelay: Infinity });
    rl.on("line", (line) => {
      if (name === "stderr") this.stderrTail.push(line);
      let parsed: Record<string, unknown> | undefined;
      if (line.startsWith("{")) {
        try {
          parsed = JSON.parse(line) as Record<string, unknown>;
        } catch {
          parsed = undefined;
        }
      }
      if (parsed && typeof parsed.level === "string") {
        const { level, timestamp: _t, agent_name: _a, msg, ...rest } = parsed;
        const fn = (["fatal", "error", "warn", "info", "debug", "trace"] as const).find((l) => l === level) ?? "info";
        this.o.log[fn]({ ...rest, stream: name }, typeof msg === "string" ? msg : "");
      } else {
        this.o.log[name === "stderr" ? "warn" : "info"]({ event: "agent_output", stream: name, line }, line);
      }
    });
  }

  private onExit(r: { code: number | null; signal: string | null }): void {
    this.child = undefined;
    if (this.stopping) {
      this.o.onState("stopped", {});
      return;
    }
    const error = `exited with ${r.signal ? `signal ${r.signal}` : `code ${r.code}`}${this.stderrTail.text() ? `; stderr: ${this.stderrTail.text()}` : ""}`;
    this.o.onState("exited", { error });
    const now = Date.now();
    if (this.readyAt !== undefined && now - this.readyAt >= this.o.crashLoopWindowMs)
      this.failedBackoff = this.o.failedRetryMs;
    this.readyAt = undefined;
    this.restartTimes = this.restartTimes.filter((t) => now - t < this.o.crashLoopWindowMs);
    if (this.restartTimes.length >= this.o.crashLoopRestarts) {
      const retryInMs = this.failedBackoff;
      this.failedBackoff = Math.min(this.failedBackoff * 2, this.o.failedRetryMaxMs);
      this.failed = true;
      this.o.onState("failed", {
        error: `crash loop: ${this.restartTimes.length} restarts within ${this.o.crashLoopWindowMs} ms; last ${error}; tried again in ${retryInMs} ms or on aip check`,
        retryInMs,
      });
      void this.stopStandby();
      this.retryTimer = setTimeout(() => void this.revive("back-off"), retryInMs);
      this.retryTimer.unref();
      return;
    }
    this.restartTimes.push(now);
    if (this.promoteStandby(error)) return;
    const delay = this.backoff;
    this.backoff = Math.min(this.backoff * 2, this.o.restartMaxMs);
    this.o.onState("restarting", { error: `${error}; restarting in ${delay} ms` });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.start().then(
        () => {
          this.backoff = this.o.restartInitialMs;
        },
        (err: Error) => this.o.log.error({ event: "restart_failed", err: err.message }, err.message),
      );
    }, delay);
  }

  /**
   * Start a failed agent again now (`aip check`, or its retry timer): its crash-loop count starts over,
   * the retry back-off does not. Resolves once the start is settled; undefined when it is not failed.
   */
  revive(reason: "check" | "back-off"): Promise<void> | undefined {
    if (!this.failed || this.stopping) return undefined;
    this.failed = false;
    clearTimeout(this.retryTimer);
    this.restartTimes = [];
    this.backoff = this.o.restartInitialMs;
    this.o.log.info({ event: "agent_revived", reason }, `starting the failed agent again (${reason})`);
    return this.start().then(
      () => undefined,
      (err: Error) => this.o.log.error({ event: "restart_failed", err: err.message }, err.message),
    );
  }

  /** Kill now (e.g. stuck in a read) and let the restart logic bring it back. */
  kill(): void {
    this.child?.kill("SIGKILL");
  }

  private stopStandby(): Promise<unknown> {
    clearTimeout(this.standbyTimer);
    const s = this.standby;
    this.standby = undefined;
    if (!s) return Promise.resolve();
    s.child.kill("SIGTERM");
    const timer = setTimeout(() => s.child.kill("SIGKILL"), this.o.shutdownGraceMs + 1000);
    return s.child.exited.finally(() => clearTimeout(timer));
  }

  /** SIGTERM, then SIGKILL after the grace period; no restart. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    clearTimeout(this.retryTimer);
    const standby = this.stopStandby();
    const child = this.child;
    if (child) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), this.o.shutdownGraceMs + 1000);
      await child.exited;
      clearTimeout(timer);
    }
    await standby;
    if (this.promotedIno !== undefined) await removeSocketFile(this.o.socketPath, this.promotedIno);
  }
}
