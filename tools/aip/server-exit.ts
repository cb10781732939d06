/**
 * Clean exits for the stdio servers (`aip lsp`, `aip mcp`). The LSP library ends the process with
 * process.exit on the client's `exit` notification, when stdin ends and when the client process dies,
 * and editors stop servers with SIGTERM: none of these waits for an embedded agency to stop, so its
 * socket, lock, state and log would stay in /tmp. Until restored, each of them first runs the cleanup
 * (once, bounded), then exits with the status asked for.
 */
import { constants } from "node:os";

/** How long a stopping server waits for its embedded agency (its agents' shutdown grace, then some). */
export const EXIT_CLEANUP_LIMIT_MS = 15_000;

/** Signals an editor or a terminal stops a server with. */
const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

export interface ExitGuard {
  /** Runs the cleanup (once); resolves when it is done or its limit passed. */
  cleanup(): Promise<void>;
  /** Puts process.exit and the signal handlers back. */
  restore(): void;
}

/**
 * Hook process.exit and the stop signals so that `cleanup` runs before the process ends; `limitMs`
 * bounds the wait (a cleanup that hangs does not keep a dead editor's server alive).
 */
export function guardExit(
  cleanup: () => Promise<void>,
  limitMs: number,
  proc: Pick<NodeJS.Process, "exit" | "on" | "off"> = process,
): ExitGuard {
  const realExit = proc.exit.bind(proc);
  let running: Promise<void> | undefined;
  const run = (): Promise<void> => {
    running ??= new Promise<void>((resolveRun) => {
      const timer = setTimeout(resolveRun, limitMs);
      timer.unref();
      cleanup()
        .catch(() => undefined)
        .finally(() => {
          clearTimeout(timer);
          resolveRun();
        });
    });
    return running;
  };
  let exiting = false;
  const exitAfter = (code: number): void => {
    if (exiting) return;
    exiting = true;
    void run().then(() => realExit(code));
  };
  proc.exit = ((code?: number | string | null) => {
    exitAfter(typeof code === "number" ? code : Number(code ?? process.exitCode ?? 0) || 0);
    return undefined as never;
  }) as NodeJS.Process["exit"];
  const onSignal = (signal: NodeJS.Signals): void => exitAfter(128 + (constants.signals[signal] ?? 15));
  for (const s of STOP_SIGNALS) proc.on(s, onSignal);
  return {
    cleanup: run,
    restore() {
      proc.exit = realExit;
      for (const s of STOP_SIGNALS) proc.off(s, onSignal);
    },
  };
}
