/** The AIP-1 log line shape: pino JSON Lines with `timestamp`, `level` as a label, `agent_name`, `trace_id`, `event`. */
import { chmodSync, fstatSync, mkdirSync, openSync, statSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type * as Pino from "pino";
import type { Logger, DestinationStream } from "pino";
import { envString } from "./env.js";

export type { Logger } from "pino";

const require = createRequire(import.meta.url);
let loadedPino: typeof Pino.pino | undefined;

/**
 * pino, loaded on first use: a silent logger (a one-shot run without AIP_LOG_FILE, which the conformance
 * kit and vetting start many of) writes nothing, so it never loads it.
 */
function pinoModule(): typeof Pino.pino {
  return (loadedPino ??= (require("pino") as typeof Pino).pino);
}

export interface LoggerOptions {
  /** Goes into every line as `agent_name` ("orchestrator" for the orchestrator). */
  agentName: string;
  /** A file path, a file descriptor (1 = stdout) or a stream; `false` for silence. */
  destination: string | number | DestinationStream | false;
  level?: string;
}

let stampMs = -1;
let stamp = "";

/**
 * pino's timestamp fragment, `,"timestamp":"<ISO 8601>"`: formatted once per millisecond, not once per
 * line (under load many lines share a millisecond).
 */
export function isoTimestamp(): string {
  const now = Date.now();
  if (now !== stampMs) {
    stampMs = now;
    stamp = `,"timestamp":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

/** A pino logger in the AIP-1 shape; with `destination: false`, the silent logger. */
export function createLogger(options: LoggerOptions): Logger {
  if (options.destination === false) return SILENT;
  const config = {
    level: options.level ?? envString("AIP_LOG_LEVEL") ?? "info",
    base: { agent_name: options.agentName },
    messageKey: "msg",
    timestamp: isoTimestamp,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return pinoModule()(config, openDestination(options.destination));
}

const nothing = (): void => undefined;

/**
 * What pino builds for level "silent" (every level method a no-op, children silent too), without
 * loading pino: it has no destination, so no line is ever formatted.
 */
const SILENT = {
  level: "silent",
  fatal: nothing,
  error: nothing,
  warn: nothing,
  info: nothing,
  debug: nothing,
  trace: nothing,
  silent: nothing,
  child: () => SILENT,
  bindings: () => ({}),
  isLevelEnabled: () => false,
  flush: (cb?: (err?: Error) => void) => cb?.(),
} as unknown as Logger;

/**
 * Writes a logger's line built by hand, for the one line per request (docs/performance.md, "The
 * orchestrator hop"): `{"level":…,"timestamp":…` then the logger's bindings, then `members` (the line's own
 * members as JSON text, without braces, ending with `"msg":…`), to the logger's own destination: the
 * line pino writes for `log[level](fields, msg)`, without pino's per-key serialisation. Returns false,
 * writing nothing, when the level is off (or the logger has no destination).
 */
export type HandLine = (members: string) => boolean;

export function handLine(log: Logger, level: "info" | "warn"): HandLine {
  const pino = pinoModule();
  const internals = log as unknown as Record<symbol, unknown>;
  const stream = internals[pino.symbols.streamSym] as DestinationStream | undefined;
  const bindings = internals[pino.symbols.chindingsSym];
  const head = `{"level":"${level}"`;
  const tail = `${typeof bindings === "string" ? bindings : ""},`;
  return (members) => {
    if (stream === undefined || !log.isLevelEnabled(level)) return false;
    stream.write(`${head}${isoTimestamp()}${tail}${members}}\n`);
    return true;
  };
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
 * True when file descriptor `fd` is the journal stream systemd connected (docs/operations.md "Operating under systemd"): `$JOURNAL_STREAM`
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
 * paths and errors (docs/security.md, "Who can reach what"). A descriptor that is the journal stream gets
 * journald priority prefixes.
 */
export function openDestination(destination: string | number | DestinationStream): DestinationStream {
  if (typeof destination === "number") {
    const stream = pinoModule().destination({ dest: destination, sync: true });
    return isJournalStream(destination) ? journalStream(stream) : stream;
  }
  if (typeof destination !== "string") return destination;
  const stream = new LineBatchFile(destination);
  try {
    if (statSync(destination).isFile()) chmodSync(destination, 0o600);
  } catch {
    // not a file we can narrow (e.g. /dev/stderr)
  }
  return stream;
}

/** Lines waiting in a LineBatchFile beyond this many characters are written at once. */
const BATCH_CHARS = 64 * 1024;
const openFiles = new Set<LineBatchFile>();
let exitHooked = false;

/**
 * A log file written in batches: the lines logged during one turn of the event loop go to the file in
 * one write when the turn ends (or at BATCH_CHARS), instead of one write per line; a line is on disk
 * before the process handles its next I/O. What is pending is written when the process exits
 * (docs/performance.md, "The orchestrator hop").
 */
export class LineBatchFile implements DestinationStream {
  private readonly fd: number;
  private pending: string[] = [];
  private chars = 0;
  private scheduled = false;

  constructor(path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, "a", 0o600);
    openFiles.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.on("exit", () => {
        for (const f of openFiles) f.flushSync();
      });
    }
  }

  write(line: string): void {
    this.pending.push(line);
    this.chars += line.length;
    if (this.chars >= BATCH_CHARS) this.flushSync();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flushSync());
    }
  }

  /** Write what is pending now. */
  flushSync(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const text = this.pending.length === 1 ? this.pending[0]! : this.pending.join("");
    this.pending = [];
    this.chars = 0;
    try {
      writeSync(this.fd, text);
    } catch {
      // A full disk or a vanished file must not take the process down with it; the lines are lost.
    }
  }

  /** pino's `logger.flush()`. */
  flush(cb?: (err?: Error) => void): void {
    this.flushSync();
    cb?.();
  }
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
