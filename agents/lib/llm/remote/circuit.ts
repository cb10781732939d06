/**
 * The engine's circuit: after `threshold` failures in a row (or at once, when the engine says how long
 * to wait with Retry-After) no request goes to the engine; a probe that sends no prompt (client.probe)
 * runs when the wait is over, and closes the circuit when it succeeds. Keystrokes are never the probe.
 */
import type { EngineError } from "./client.js";

/** The longest wait between two probes of a dead engine. */
export const MAX_REPROBE_MS = 30_000;

export class Circuit {
  state: "closed" | "open" = "closed";
  /** Failures in a row. */
  failures = 0;
  /** Why it opened (the last failure's message). */
  reason: string | undefined;
  probes = 0;
  opens = 0;
  private wait: number;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly threshold: number,
    private readonly reprobeMs: number,
    private readonly probe: () => Promise<void>,
    private readonly onChange: (state: "closed" | "open", reason: string | undefined) => void = () => undefined,
  ) {
    this.wait = reprobeMs;
  }

  get open(): boolean {
    return this.state === "open";
  }

  success(): void {
    this.failures = 0;
    this.wait = this.reprobeMs;
    if (this.state === "open") this.close();
  }

  failure(err: EngineError): void {
    this.failures++;
    this.reason = err.message;
    if (err.retryAfterMs !== undefined) this.trip(Math.max(err.retryAfterMs, 1));
    else if (this.failures >= this.threshold) this.trip(this.wait);
  }

  /** Open now and probe after `ms`. */
  trip(ms: number): void {
    if (this.closed) return;
    if (this.state !== "open") {
      this.state = "open";
      this.opens++;
      this.onChange("open", this.reason);
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reprobe(), ms);
    this.timer.unref();
  }

  private async reprobe(): Promise<void> {
    this.probes++;
    try {
      await this.probe();
      this.success();
    } catch (err) {
      const e = err as EngineError;
      this.reason = e.message;
      this.wait = Math.min(MAX_REPROBE_MS, this.wait * 2);
      this.trip(e.retryAfterMs ?? this.wait);
    }
  }

  private close(): void {
    clearTimeout(this.timer);
    this.state = "closed";
    this.onChange("closed", undefined);
  }

  stop(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  toJSON(): Record<string, unknown> {
    return {
      state: this.state,
      failures: this.failures,
      opens: this.opens,
      probes: this.probes,
      ...(this.state === "open" ? { reason: this.reason } : {}),
    };
  }
}
