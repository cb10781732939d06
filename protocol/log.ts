/** The AIP-1 log line shape: pino JSON Lines with `timestamp`, `level` as a label, `agent_name`, `trace_id`, `event`. */
import { chmodSync, fstatSync, statSync } from "node:fs";
import { pino, type Logger, type DestinationStream } from "pino";

export type { Logger } from "pino";

export interface LoggerOptions {
  /** Goes into every line as `agent_name` ("orchestrator" for the orchestrator). */
  agentName: string;
  /** A file path, a file descriptor (1 = stdout) or a stream; `false` for silence. */
  destination: string | number | DestinationStream | false;
  level?: string;
}

/** A pino logger in the AIP-1 shape. */
export function createLogger(options: LoggerOptions): Logger {
  const level = options.level ?? process.env.AIP_LOG_LEVEL ?? "info";
  const config = {
    level: options.destination === false ? "silent" : level,
    base: { agent_name: options.agentName },
    messageKey: "msg",
    timestamp: () => `,"timestamp":"${new Date().toISOString()}"`,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  if (options.destination === false) return pino(config);
  return pino(config, openDestination(options.destination));
}

/**
 * sd-daemon priorities (sd-daemon.h SD_CRIT … SD_DEBUG) for pino's level labels: journald strips a
 * leading `<N>` from each stdout line and files the entry at that priority (`journalctl -p err`).
 */
export const JOURNAL_PRIORITY: Readonly<Record<string, number>> = {
  fatal: 2,
  error: 3,
  warn: 4,
  info: 6,
  debug: 7,
  trace: 7,
};

/**
 * True when file descriptor `fd` is the journal stream systemd connected (README "Logs"): `$JOURNAL_STREAM`
 * is `DEVICE:INODE` of that stream, compared with the descriptor's own, so a child whose stdout is a
 * pipe does not prefix even though it inherited the variable.
 */
export function isJournalStream(fd: number, env: NodeJS.ProcessEnv = process.env): boolean {
  const m = /^(\d+):(\d+)$/.exec(env.JOURNAL_STREAM ?? "");
  if (!m) return false;
  try {
    const st = fstatSync(fd, { bigint: true });
    return st.dev === BigInt(m[1]!) && st.ino === BigInt(m[2]!);
  } catch {
    return false;
  }
}

/** Prefix each JSON line with its journald priority (`<3>{"level":"error",…}`); the JSON is unchanged. */
export function journalStream(inner: DestinationStream): DestinationStream {
  return {
    write(line: string): void {
      const level = /"level":"(\w+)"/.exec(line)?.[1];
      inner.write(`<${JOURNAL_PRIORITY[level ?? "info"] ?? 6}>${line}`);
    },
  };
}

/**
 * Open a log destination once, so several loggers (one per agent name) can share it. A log file is
 * created owner-only (0600), and an existing regular file is narrowed to 0600: logs carry trace ids,
 * paths and errors (docs/security.md, "State"). A descriptor that is the journal stream gets
 * journald priority prefixes.
 */
export function openDestination(destination: string | number | DestinationStream): DestinationStream {
  if (typeof destination === "number") {
    const stream = pino.destination({ dest: destination, sync: true });
    return isJournalStream(destination) ? journalStream(stream) : stream;
  }
  if (typeof destination !== "string") return destination;
  const stream = pino.destination({ dest: destination, sync: true, mkdir: true, mode: 0o600 });
  try {
    if (statSync(destination).isFile()) chmodSync(destination, 0o600);
  } catch {
    // not a file we can narrow (e.g. /dev/stderr)
  }
  return stream;
}

/**
 * At most `perSecond` events a second pass; the others are counted. `take()` answers `undefined` for an
 * event to drop, or the number dropped since the last one that passed (to log with it).
 */
export class RateLimit {
  private windowStart = 0;
  private passed = 0;
  private dropped = 0;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(): number | undefined {
    const t = this.now();
    if (t - this.windowStart >= 1000) {
      this.windowStart = t;
      this.passed = 0;
    }
    if (this.passed >= this.perSecond) {
      this.dropped++;
      return undefined;
    }
    this.passed++;
    const dropped = this.dropped;
    this.dropped = 0;
    return dropped;
  }
}
