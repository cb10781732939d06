/** Every limit a server enforces, with its named default. Override per server. */
export interface Limits {
  /** Largest HTTP request body, in bytes. */
  maxBodyBytes: number;
  /** Largest NDJSON line, in bytes (a request plus its newline). */
  maxLineBytes: number;
  /** Deepest JSON nesting of objects and arrays accepted. */
  maxJsonDepth: number;
  /** Concurrent connections per server; further connections are closed at once. */
  maxConnections: number;
  /**
   * Connections the kernel holds before the server accepts them (the listen(2) backlog, capped by
   * net.core.somaxconn): while no process accepts (a reload's hand-over, a busy start), clients wait
   * here; beyond it a connect to a Unix socket fails at once (EAGAIN).
   */
  listenBacklog: number;
  /** An idle keep-alive or NDJSON connection is closed after this long without traffic. */
  idleTimeoutMs: number;
  /** The whole HTTP request head must arrive within this long (slowloris guard). */
  headersTimeoutMs: number;
  /** The whole HTTP request, head and body, must arrive within this long. */
  requestReceiveTimeoutMs: number;
  /** Requests answered concurrently on one NDJSON connection; reading pauses beyond it. */
  maxPipelined: number;
  /** Answers written to an NDJSON connection and not yet read by its client; reading pauses beyond it. */
  maxQueuedOutputBytes: number;
  /** A whole NDJSON line must arrive within this long of its first byte (the trickle guard); then the connection closes. */
  lineReceiveTimeoutMs: number;
  /** SIGTERM: in-flight work gets this long to finish before the process exits. */
  shutdownGraceMs: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxBodyBytes: 1024 * 1024,
  maxLineBytes: 1024 * 1024 + 1,
  maxJsonDepth: 64,
  maxConnections: 1000,
  listenBacklog: 4096,
  idleTimeoutMs: 60_000,
  headersTimeoutMs: 10_000,
  requestReceiveTimeoutMs: 30_000,
  maxPipelined: 64,
  maxQueuedOutputBytes: 256 * 1024,
  lineReceiveTimeoutMs: 10_000,
  shutdownGraceMs: 5_000,
});

export function resolveLimits(overrides: Partial<Limits> = {}): Limits {
  return { ...DEFAULT_LIMITS, ...overrides };
}

/**
 * How much more an agent's server accepts than the front door: the orchestrator forwards the request
 * re-encoded with `trace_id` and `timeout_ms` added, and numbers may be written longer (`1e20` as 21
 * digits). A forwarded body over the agent's limit is refused by the orchestrator as the client's 413.
 */
export const FORWARD_HEADROOM_BYTES = 64 * 1024;

/** The limits an agent serves with (`--listen`): the front door's defaults plus the forwarding headroom. */
export const AGENT_LIMITS: Readonly<Limits> = Object.freeze({
  ...DEFAULT_LIMITS,
  maxBodyBytes: DEFAULT_LIMITS.maxBodyBytes + FORWARD_HEADROOM_BYTES,
  maxLineBytes: DEFAULT_LIMITS.maxLineBytes + FORWARD_HEADROOM_BYTES,
});
