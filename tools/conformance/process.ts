/** Running an agent executable for the conformance kit: one-shot runs and socket-mode servers. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitForSocket } from "../../protocol/client.js";

export interface OneShotResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Run `exe args` with `stdin` written and closed; collect stdout/stderr; kill after `timeoutMs`. */
export function runOnce(
  exe: string,
  args: string[],
  stdin: string | Buffer,
  timeoutMs = 15_000,
): Promise<OneShotResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(exe, args, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        timedOut,
      });
    });
    child.stdin.on("error", () => undefined); // the agent may exit before reading everything
    child.stdin.end(stdin);
  });
}

/** A short private directory for sockets (Unix socket paths are limited to 107 bytes). */
export function socketDir(prefix = "aipk-"): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Served {
  child: ChildProcess;
  socketPath: string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Start `exe --listen socketPath` and wait until the socket accepts connections. */
export async function serve(exe: string, socketPath: string, timeoutMs = 15_000): Promise<Served> {
  const child = spawn(exe, ["--listen", socketPath], { stdio: ["ignore", "pipe", "pipe"] });
  const err: Buffer[] = [];
  child.stdout!.resume(); // drain logs: a full pipe would block the agent
  child.stderr!.on("data", (c: Buffer) => err.push(c));
  let alive = true;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => {
      alive = false;
      resolve({ code, signal });
    });
  });
  const served: Served = {
    child,
    socketPath,
    stderr: () => Buffer.concat(err).toString("utf8"),
    exited,
    stop: async () => {
      if (alive) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
  try {
    await waitForSocket(socketPath, timeoutMs, () => alive);
  } catch (e) {
    await served.stop();
    throw new Error(`${(e as Error).message}${served.stderr() ? `; stderr: ${served.stderr().slice(0, 500)}` : ""}`);
  }
  return served;
}
