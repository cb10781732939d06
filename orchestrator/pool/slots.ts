/**
 * The pool base: `size` slots for in-flight calls and a bounded FIFO wait queue beyond them.
 * A full queue, or a wait past the caller's deadline, is AIP_ERR_SOCKET_BUSY.
 */
import { AipError } from "../../protocol/errors.js";

interface Waiter {
  resolve: (release: () => void) => void;
  reject: (err: Error) => void;
  cleanup: () => void;
}

export interface SlotStats {
  size: number;
  inflight: number;
  queued: number;
  maxQueue: number;
}

export class Slots {
  private inflightCount = 0;
  private readonly queue: Waiter[] = [];

  constructor(
    private sizeValue: number,
    private readonly maxQueue: number,
    private readonly label: string,
  ) {}

  get size(): number {
    return this.sizeValue;
  }

  /** Change the number of slots; queued callers are admitted at once if it grew. */
  resize(size: number): void {
    this.sizeValue = Math.max(1, size);
    this.drain();
  }

  get inflight(): number {
    return this.inflightCount;
  }

  get queued(): number {
    return this.queue.length;
  }

  stats(): SlotStats {
    return { size: this.sizeValue, inflight: this.inflightCount, queued: this.queue.length, maxQueue: this.maxQueue };
  }

  /** Wait for a slot until `deadline` (epoch ms); resolves with the release function. */
  acquire(deadline: number, signal?: AbortSignal): Promise<() => void> {
    if (this.inflightCount < this.sizeValue && this.queue.length === 0) return Promise.resolve(this.take());
    if (this.queue.length >= this.maxQueue) {
      return Promise.reject(
        new AipError(
          "AIP_ERR_SOCKET_BUSY",
          `Agent ${this.label}: all ${this.sizeValue} pool slots busy and the wait queue is full (${this.maxQueue})`,
          {
            extensions: { pool_size: this.sizeValue, queue_limit: this.maxQueue },
          },
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const waiter: Waiter = {
        resolve,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
        },
      };
      const leave = (err: Error): void => {
        const i = this.queue.indexOf(waiter);
        if (i !== -1) this.queue.splice(i, 1);
        waiter.cleanup();
        reject(err);
      };
      const busy = (): AipError =>
        new AipError(
          "AIP_ERR_SOCKET_BUSY",
          `Agent ${this.label}: waited ${Date.now() - started} ms for a pool slot until the deadline`,
          {
            extensions: { pool_size: this.sizeValue },
          },
        );
      const timer = setTimeout(() => leave(busy()), Math.max(0, deadline - Date.now()));
      const onAbort = (): void => {
        const reason: unknown = signal!.reason;
        // The deadline passing while queued is a busy pool, not a slow agent.
        if (reason instanceof AipError && reason.code === "AIP_ERR_TIMEOUT") leave(busy());
        else
          leave(reason instanceof Error ? reason : new AipError("AIP_ERR_CANCELLED", "Client went away while queued"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  private take(): () => void {
    this.inflightCount++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inflightCount--;
      this.drain();
    };
  }

  private drain(): void {
    while (this.inflightCount < this.sizeValue && this.queue.length > 0) {
      const w = this.queue.shift()!;
      w.cleanup();
      w.resolve(this.take());
    }
  }

  /** Reject every queued caller (agent gone, shutdown). */
  failQueued(err: Error): void {
    for (const w of this.queue.splice(0)) {
      w.cleanup();
      w.reject(err);
    }
  }
}
