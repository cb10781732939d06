/**
 * The pool base: `size` slots for in-flight calls and a bounded wait queue beyond them, shared fairly
 * between client connections (docs/architecture.md: fair sharing between connections).
 *
 * - Each connection waits in its own FIFO; freed slots go to the connections in turn (round-robin),
 *   not to whoever queued first, so a connection that pipelines 64 requests does not put them all
 *   ahead of another connection's one.
 * - While more than one connection is using the agent, each may hold at most its fair share of the
 *   slots, max(1, floor(size / connections)); alone, a connection may use them all.
 * - The queue holds `maxQueue` waiters in all. When it is full, the connection with the most waiting
 *   gives up its newest waiter (AIP_ERR_SOCKET_BUSY) to a connection with fewer; a caller whose own
 *   connection waits the most is refused (AIP_ERR_SOCKET_BUSY). A wait past the caller's deadline is
 *   AIP_ERR_SOCKET_BUSY too.
 */
import { AipError } from "../../protocol/contract/errors.js";
import type { Cancellation } from "../../protocol/transport/cancel.js";
import { Deadlines, type Expiring } from "../../protocol/util/deadlines.js";

/** Every queued caller's deadline, behind one timer (protocol/util/deadlines.ts). */
const waits = new Deadlines();

interface Waiter {
  readonly lane: Lane;
  resolve: (release: () => void) => void;
  reject: (err: Error) => void;
  cleanup: () => void;
}

/** One connection's use of the pool: its slots held and its callers waiting. */
interface Lane {
  readonly connection: number;
  inflight: number;
  readonly queue: Waiter[];
}

export interface SlotStats {
  size: number;
  inflight: number;
  queued: number;
  maxQueue: number;
  /** Client connections holding a slot or waiting for one. */
  connections: number;
}

export class Slots {
  private inflightCount = 0;
  private queuedCount = 0;
  /**
   * Connections holding or waiting for a slot, in round-robin order: a new connection joins at the
   * back, and one given a slot moves to the back (a Map keeps insertion order).
   */
  private readonly lanes = new Map<number, Lane>();

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
    return this.queuedCount;
  }

  stats(): SlotStats {
    return {
      size: this.sizeValue,
      inflight: this.inflightCount,
      queued: this.queuedCount,
      maxQueue: this.maxQueue,
      connections: this.lanes.size,
    };
  }

  /** The most slots one connection may hold now: all of them alone, an equal share beside others. */
  fairShare(): number {
    const active = this.lanes.size;
    return active <= 1 ? this.sizeValue : Math.max(1, Math.floor(this.sizeValue / active));
  }

  /**
   * Wait for a slot until `deadline` (epoch ms), in `connection`'s own queue; resolves with the release
   * function.
   */
  acquire(deadline: number, cancel?: Cancellation, connection = 0): Promise<() => void> {
    const lane = this.lane(connection);
    if (this.inflightCount < this.sizeValue && lane.queue.length === 0 && lane.inflight < this.fairShare())
      return Promise.resolve(this.take(lane));
    if (this.queuedCount >= this.maxQueue && !this.makeRoom(lane)) {
      this.forget(lane);
      return Promise.reject(this.full());
    }
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const waiter: Waiter & Expiring = {
        lane,
        resolve,
        reject,
        cleanup: () => {
          waits.delete(waiter);
          cancel?.clear();
        },
        expiresAt: performance.now() + Math.max(0, deadline - started),
        expire: () => leave(busy()),
      };
      const leave = (err: Error): void => {
        this.remove(waiter);
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
      waits.add(waiter);
      // The deadline passing while queued is a busy pool, not a slow agent.
      cancel?.onAbort((reason) =>
        leave(reason instanceof AipError && reason.code === "AIP_ERR_TIMEOUT" ? busy() : reason),
      );
      lane.queue.push(waiter);
      this.queuedCount++;
    });
  }

  private lane(connection: number): Lane {
    let lane = this.lanes.get(connection);
    if (!lane) {
      lane = { connection, inflight: 0, queue: [] };
      this.lanes.set(connection, lane);
    }
    return lane;
  }

  /** Drop a connection's lane once it holds nothing and waits for nothing. */
  private forget(lane: Lane): void {
    if (lane.inflight === 0 && lane.queue.length === 0) this.lanes.delete(lane.connection);
  }

  private full(): AipError {
    return new AipError(
      "AIP_ERR_SOCKET_BUSY",
      `Agent ${this.label}: all ${this.sizeValue} pool slots busy and the wait queue is full (${this.maxQueue})`,
      {
        extensions: { pool_size: this.sizeValue, queue_limit: this.maxQueue },
      },
    );
  }

  /** The queue is full: the connection waiting the most (not `lane`'s) gives up its newest waiter. */
  private makeRoom(lane: Lane): boolean {
    let longest: Lane | undefined;
    for (const l of this.lanes.values()) if (!longest || l.queue.length > longest.queue.length) longest = l;
    if (!longest || longest === lane || longest.queue.length <= lane.queue.length + 1) return false;
    const evicted = longest.queue[longest.queue.length - 1]!;
    this.remove(evicted);
    evicted.reject(
      new AipError(
        "AIP_ERR_SOCKET_BUSY",
        `Agent ${this.label}: the wait queue is full (${this.maxQueue}) and this connection had the most requests waiting (${longest.queue.length + 1}); queue space is shared fairly between connections`,
        {
          extensions: { pool_size: this.sizeValue, queue_limit: this.maxQueue },
        },
      ),
    );
    return true;
  }

  private remove(waiter: Waiter): void {
    const i = waiter.lane.queue.indexOf(waiter);
    if (i !== -1) {
      waiter.lane.queue.splice(i, 1);
      this.queuedCount--;
    }
    waiter.cleanup();
    this.forget(waiter.lane);
    // A connection leaving raises everyone's share.
    this.drain();
  }

  private take(lane: Lane): () => void {
    this.lanes.delete(lane.connection);
    this.lanes.set(lane.connection, lane);
    this.inflightCount++;
    lane.inflight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inflightCount--;
      lane.inflight--;
      this.forget(lane);
      this.drain();
    };
  }

  /** Give free slots to waiting connections in turn, each up to its fair share. */
  private drain(): void {
    while (this.inflightCount < this.sizeValue && this.queuedCount > 0) {
      const lane = this.next();
      if (!lane) return; // every waiting connection holds its share; a release calls drain again
      const w = lane.queue.shift()!;
      this.queuedCount--;
      w.cleanup();
      w.resolve(this.take(lane));
    }
  }

  /** The first connection in turn that waits and holds less than its share. */
  private next(): Lane | undefined {
    const share = this.fairShare();
    for (const lane of this.lanes.values()) if (lane.queue.length > 0 && lane.inflight < share) return lane;
    return undefined;
  }

  /** Reject every queued caller (agent gone, shutdown). */
  failQueued(err: Error): void {
    for (const lane of [...this.lanes.values()]) {
      for (const w of lane.queue.splice(0)) {
        this.queuedCount--;
        w.cleanup();
        w.reject(err);
      }
      this.forget(lane);
    }
  }
}
