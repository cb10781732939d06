/**
 * Fair turns on the event loop between client connections (docs/architecture.md: fair sharing between
 * connections). A server has one thread: the time it spends decoding, validating and routing one
 * connection's requests is time every other connection waits. Requests go through `FairTurns.run`:
 *
 * - In each turn of the event loop, a connection's first request runs at once, if it is small (under
 *   `bigBytes`): the common case, one request in flight, costs nothing extra.
 * - Its further requests in the same turn (an NDJSON pipeline), and every large request, wait in the
 *   connection's own queue. Queued requests run after the turn's I/O (on `setImmediate`), the
 *   connection that used the least time first, for at most `sliceMs` or one large request; then the
 *   loop reads the sockets again, so another connection's new request runs before the rest of them.
 * - A connection is charged the time its requests held the thread (decaying by half every
 *   `halfLifeMs`), so among waiting connections the cheap ones go first; an expensive or flooding
 *   connection gets what the others leave, not a turn per request.
 */
import { performance } from "node:perf_hooks";

/** How long queued requests may hold the event loop before the sockets are read again. */
export const TURN_SLICE_MS = 2;
/** A request this large (bytes) never runs at once: it waits for its turn, one per slice. */
export const TURN_BIG_BYTES = 64 * 1024;
/** Time charged to a connection halves this often: what counts is its recent use. */
export const TURN_HALF_LIFE_MS = 1000;

interface Job {
  start(): void;
  cancel(): void;
  big: boolean;
}

interface Lane {
  readonly connection: number;
  /** Time charged, ms, as of `at`. */
  used: number;
  at: number;
  readonly queue: Job[];
}

export interface TurnStats {
  /** Requests waiting for their turn, over all connections. */
  queued: number;
  /** Requests that waited for their turn since start (deferred rather than run at once). */
  deferred: number;
}

export interface TurnOptions {
  sliceMs?: number;
  bigBytes?: number;
  halfLifeMs?: number;
}

export class FairTurns {
  private readonly lanes = new Map<number, Lane>();
  /** Connections that ran a request at once in the current turn of the event loop. */
  private readonly ranThisTurn = new Set<number>();
  private turnResetScheduled = false;
  private drainScheduled = false;
  private queuedCount = 0;
  private deferredCount = 0;
  private readonly sliceMs: number;
  private readonly bigBytes: number;
  private readonly halfLifeMs: number;

  constructor(options: TurnOptions = {}) {
    this.sliceMs = options.sliceMs ?? TURN_SLICE_MS;
    this.bigBytes = options.bigBytes ?? TURN_BIG_BYTES;
    this.halfLifeMs = options.halfLifeMs ?? TURN_HALF_LIFE_MS;
  }

  stats(): TurnStats {
    return { queued: this.queuedCount, deferred: this.deferredCount };
  }

  /**
   * Run `job` for `connection` when it is its turn; `bytes` is the request's size. `cancelled` gives
   * the result instead when the connection closes first (`close`).
   */
  run<T>(connection: number, bytes: number, job: () => Promise<T>, cancelled: () => T): Promise<T> {
    const lane = this.lane(connection);
    const big = bytes >= this.bigBytes;
    if (!big && lane.queue.length === 0 && !this.ranThisTurn.has(connection)) {
      this.ranThisTurn.add(connection);
      if (!this.turnResetScheduled) {
        this.turnResetScheduled = true;
        setImmediate(() => {
          this.turnResetScheduled = false;
          this.ranThisTurn.clear();
        });
      }
      return this.timed(lane, job);
    }
    this.deferredCount++;
    return new Promise<T>((resolve) => {
      lane.queue.push({
        big,
        start: () => resolve(this.timed(lane, job)),
        cancel: () => resolve(cancelled()),
      });
      this.queuedCount++;
      this.scheduleDrain();
    });
  }

  /** The connection closed: its queued requests are answered by their `cancelled`, and it is forgotten. */
  close(connection: number): void {
    const lane = this.lanes.get(connection);
    if (!lane) return;
    this.lanes.delete(connection);
    this.queuedCount -= lane.queue.length;
    for (const job of lane.queue.splice(0)) job.cancel();
  }

  private lane(connection: number): Lane {
    let lane = this.lanes.get(connection);
    if (!lane) {
      lane = { connection, used: 0, at: performance.now(), queue: [] };
      this.lanes.set(connection, lane);
    }
    return lane;
  }

  /** Run the job now, charging the time its synchronous part holds the thread to its connection. */
  private timed<T>(lane: Lane, job: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return job();
    } finally {
      const t1 = performance.now();
      lane.used = this.usedAt(lane, t1) + (t1 - t0);
      lane.at = t1;
    }
  }

  /** A lane's charge decayed to `now`. */
  private usedAt(lane: Lane, now: number): number {
    const dt = now - lane.at;
    return dt <= 0 ? lane.used : lane.used * Math.pow(0.5, dt / this.halfLifeMs);
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(() => this.drain());
  }

  /** Run queued requests, least-charged connection first, for one slice or one large request. */
  private drain(): void {
    this.drainScheduled = false;
    const start = performance.now();
    while (this.queuedCount > 0) {
      const lane = this.cheapest(performance.now());
      if (!lane) break;
      const job = lane.queue.shift()!;
      this.queuedCount--;
      job.start();
      if (job.big || performance.now() - start >= this.sliceMs) break;
    }
    if (this.queuedCount > 0) this.scheduleDrain();
  }

  private cheapest(now: number): Lane | undefined {
    let best: Lane | undefined;
    let bestUsed = Infinity;
    for (const lane of this.lanes.values()) {
      if (lane.queue.length === 0) continue;
      const used = this.usedAt(lane, now);
      if (used < bestUsed) {
        best = lane;
        bestUsed = used;
      }
    }
    return best;
  }
}
