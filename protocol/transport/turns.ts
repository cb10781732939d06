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
 * - While other connections have requests started and not yet answered (or waiting), a connection
 *   may have at most its share of `sharedInflight` started and unanswered,
 *   max(1, floor(sharedInflight / active connections)); its next request waits in its queue until one
 *   of them is answered. What a request costs after its start (the agent's work, its answer read,
 *   logged and written back) is not shared by turns: this keeps one pipelining connection from
 *   having 64 requests' worth of that work ahead of another connection's one. Alone, a connection
 *   pipelines as far as the framing lets it (NDJSON: `maxPipelined`).
 * - Pacing: while another connection has run a request in the last `activeMs`, a connection charged
 *   more than `lead` times the least charged of those others (plus one slice) starts its waiting
 *   requests at most one per `paceMs` (several flooding connections pace each other too). A
 *   flooding connection's next request is always waiting at the server, while a client that waits
 *   for each answer sends its next one a round trip later;
 *   without pacing the flood takes every moment in between (many times the requests of several
 *   such clients together), and the thread, busy all the time, is scheduled by the
 *   kernel like any CPU-bound process, late. Paced, a flood costs at most one request per `paceMs`
 *   while others are served, and all it can use once they have been quiet for `activeMs`.
 * - Cost classes: a large request (`bigBytes` or more) is expensive whoever sends it, and a client that
 *   opens a connection per request is a new, uncharged connection each time, which the charges above
 *   never catch. While a small request has run in the last `activeMs`, waiting small requests start
 *   before any large one, one large request at a time is started and unanswered, and the next starts
 *   `bigPaceMsPerMiB` ms per MiB of it after its answer (a 1 MiB request, then the next large one 50 ms
 *   after it was answered; 64 KiB, 3 ms), or (1 / `bigShare` - 1) times as long as it took, start to
 *   answer (at most `bigMaxPaceMs`), if that is later (large requests take at most `bigShare` of the
 *   time: 5 %), the one waiting longest first: a large request waits no longer than those ahead of it
 *   and their paces, and none is refused.
 *   With no small request lately, large ones start as before (docs/architecture.md, Fair sharing
 *   between connections).
 */
import { performance } from "node:perf_hooks";

/** How long queued requests may hold the event loop before the sockets are read again. */
export const TURN_SLICE_MS = 2;
/** A request this large (bytes) never runs at once: it waits for its turn, one per slice. */
export const TURN_BIG_BYTES = 64 * 1024;
/** Time charged to a connection halves this often: what counts is its recent use. */
export const TURN_HALF_LIFE_MS = 1000;
/** Requests started and unanswered shared between the active connections (each gets at least one). */
export const TURN_SHARED_INFLIGHT = 4;
/** A connection that ran a request this recently is served beside (pacing). */
export const TURN_ACTIVE_MS = 100;
/** Charged more than this many times the least charged other active connection: paced. */
export const TURN_LEAD = 2;
/** A paced connection starts at most one waiting request this often. */
export const TURN_PACE_MS = 5;
/** While small requests are served, a large request starts this many ms per MiB of the previous one after its answer. */
export const TURN_BIG_PACE_MS_PER_MIB = 50;
/**
 * While small requests are served, large ones take at most this share of the time: the next starts no
 * sooner after the last one's answer than (1 / share - 1) times that one took, start to answer.
 */
export const TURN_BIG_SHARE = 0.05;
/** The share's pace is at most this long: a large request that took seconds (a model's) holds up the next no more. */
export const TURN_BIG_MAX_PACE_MS = 2000;
const MiB = 1024 * 1024;

interface Job {
  start(): void;
  cancel(): void;
  big: boolean;
  bytes: number;
  /** When it started waiting (large requests start oldest first). */
  queuedAt: number;
}

interface Lane {
  readonly connection: number;
  /** Time charged, ms, as of `at`. */
  used: number;
  at: number;
  readonly queue: Job[];
  /** Requests started and not yet answered. */
  inflight: number;
  /** The connection closed: the lane is forgotten once its started requests are answered. */
  closed: boolean;
  /** When it last started a request (pacing). */
  startedAt: number;
  /** Counted in `activeCount`: requests started and unanswered, or waiting. */
  active: boolean;
  /** The turn of the event loop (`FairTurns.turn`) in which it last ran a request at once. */
  ranTurn: number;
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
  sharedInflight?: number;
  activeMs?: number;
  lead?: number;
  paceMs?: number;
  bigPaceMsPerMiB?: number;
  bigShare?: number;
  bigMaxPaceMs?: number;
}

export class FairTurns {
  private readonly lanes = new Map<number, Lane>();
  /**
   * Lanes with requests started and unanswered, or waiting: those sharing `sharedInflight`. A count and
   * a flag on each lane, not a set: a connection with one request at a time joins and leaves it on every
   * request (docs/performance.md, "The orchestrator hop").
   */
  private activeCount = 0;
  /** Shutting down (`openAll`): queued requests start without waiting for their connection's share. */
  private uncapped = false;
  /** The current turn of the event loop, counted: a lane whose `ranTurn` is this ran a request at once in it. */
  private turn = 0;
  private turnResetScheduled = false;
  private drainScheduled = false;
  /** A drain waits for a pace (a connection's, or large requests'). */
  private paceTimer: NodeJS.Timeout | undefined;
  /** When a small request last started, when the next large one may, and large ones started and unanswered (cost classes). */
  private smallAt = -Infinity;
  private nextBigAt = -Infinity;
  private bigInflight = 0;
  private queuedCount = 0;
  private deferredCount = 0;
  private readonly sliceMs: number;
  private readonly bigBytes: number;
  private readonly halfLifeMs: number;
  private readonly sharedInflight: number;
  private readonly activeMs: number;
  private readonly lead: number;
  private readonly paceMs: number;
  private readonly bigPaceMsPerMiB: number;
  private readonly bigShare: number;
  private readonly bigMaxPaceMs: number;

  constructor(options: TurnOptions = {}) {
    this.sliceMs = options.sliceMs ?? TURN_SLICE_MS;
    this.bigBytes = options.bigBytes ?? TURN_BIG_BYTES;
    this.halfLifeMs = options.halfLifeMs ?? TURN_HALF_LIFE_MS;
    this.sharedInflight = options.sharedInflight ?? TURN_SHARED_INFLIGHT;
    this.activeMs = options.activeMs ?? TURN_ACTIVE_MS;
    this.lead = options.lead ?? TURN_LEAD;
    this.paceMs = options.paceMs ?? TURN_PACE_MS;
    this.bigPaceMsPerMiB = options.bigPaceMsPerMiB ?? TURN_BIG_PACE_MS_PER_MIB;
    this.bigShare = options.bigShare ?? TURN_BIG_SHARE;
    this.bigMaxPaceMs = options.bigMaxPaceMs ?? TURN_BIG_MAX_PACE_MS;
  }

  stats(): TurnStats {
    return { queued: this.queuedCount, deferred: this.deferredCount };
  }

  /** Shutting down: every waiting request starts on its turn, whatever its connection has in flight. */
  openAll(): void {
    this.uncapped = true;
    if (this.queuedCount > 0) this.scheduleDrain();
  }

  /** The most requests one connection may have started and unanswered now. */
  private share(): number {
    const n = this.activeCount;
    return n <= 1 || this.uncapped ? Infinity : Math.max(1, Math.floor(this.sharedInflight / n));
  }

  /** Keep `activeCount` up to date after a lane's queue or in-flight count changed. */
  private touch(lane: Lane): void {
    const active = !lane.closed && (lane.inflight > 0 || lane.queue.length > 0);
    if (active === lane.active) return;
    lane.active = active;
    this.activeCount += active ? 1 : -1;
  }

  /**
   * Run `job` for `connection` when it is its turn; `bytes` is the request's size. `cancelled` gives
   * the result instead when the connection closes first (`close`).
   */
  run<T>(connection: number, bytes: number, job: () => Promise<T>, cancelled: () => T): Promise<T> {
    const lane = this.lane(connection);
    const big = bytes >= this.bigBytes;
    if (!big && lane.queue.length === 0 && lane.ranTurn !== this.turn && lane.inflight < this.share()) {
      lane.ranTurn = this.turn;
      if (!this.turnResetScheduled) {
        this.turnResetScheduled = true;
        setImmediate(() => {
          this.turnResetScheduled = false;
          this.turn++;
        });
      }
      this.smallAt = performance.now();
      return this.timed(lane, job);
    }
    this.deferredCount++;
    return new Promise<T>((resolve) => {
      lane.queue.push({
        big,
        bytes,
        queuedAt: performance.now(),
        start: () => resolve(this.timed(lane, job, big ? (tookMs) => this.bigDone(bytes, tookMs) : undefined)),
        cancel: () => resolve(cancelled()),
      });
      this.queuedCount++;
      this.touch(lane);
      this.scheduleDrain();
    });
  }

  /** The connection closed: its queued requests are answered by their `cancelled`, and it is forgotten. */
  close(connection: number): void {
    const lane = this.lanes.get(connection);
    if (!lane) return;
    this.lanes.delete(connection);
    lane.closed = true;
    this.queuedCount -= lane.queue.length;
    this.touch(lane);
    for (const job of lane.queue.splice(0)) job.cancel();
  }

  private lane(connection: number): Lane {
    let lane = this.lanes.get(connection);
    if (!lane) {
      lane = {
        connection,
        used: 0,
        at: performance.now(),
        queue: [],
        inflight: 0,
        closed: false,
        startedAt: -Infinity,
        active: false,
        ranTurn: -1,
      };
      this.lanes.set(connection, lane);
    }
    return lane;
  }

  /** A large request was answered: the next may start after its pace (cost classes). */
  private bigDone(bytes: number, tookMs: number): void {
    this.bigInflight--;
    const share = Math.min(tookMs * (1 / this.bigShare - 1), this.bigMaxPaceMs);
    const pace = Math.max((bytes / MiB) * this.bigPaceMsPerMiB, share);
    this.nextBigAt = performance.now() + pace;
    if (this.queuedCount > 0) this.scheduleDrain();
  }

  /**
   * Run the job now, charging the time its synchronous part holds the thread to its connection, and
   * counting it in the connection's requests in flight until it settles; `onDone` when it settles.
   */
  private timed<T>(lane: Lane, job: () => Promise<T>, onDone?: (tookMs: number) => void): Promise<T> {
    const t0 = performance.now();
    lane.startedAt = t0;
    lane.inflight++;
    this.touch(lane);
    let settled = false;
    const done = (): void => {
      if (settled) return;
      settled = true;
      onDone?.(performance.now() - t0);
      lane.inflight--;
      this.touch(lane);
      // Its share is free again: a request it (or, with the active count down, another) queued may start.
      if (this.queuedCount > 0) this.scheduleDrain();
    };
    try {
      const result = job();
      result.then(done, done);
      return result;
    } catch (err) {
      done();
      throw err;
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

  /** Drain again once `wait` ms have passed (a pace), unless a drain comes sooner. */
  private drainAfter(wait: number): void {
    if (this.paceTimer !== undefined) return;
    this.paceTimer = setTimeout(() => {
      this.paceTimer = undefined;
      this.drain();
    }, wait);
  }

  /** Run queued requests, least-charged connection first, for one slice or one large request. */
  private drain(): void {
    this.drainScheduled = false;
    if (this.paceTimer !== undefined) {
      clearTimeout(this.paceTimer);
      this.paceTimer = undefined;
    }
    const start = performance.now();
    while (this.queuedCount > 0) {
      const now = performance.now();
      const next = this.cheapest(now);
      // Every waiting connection has its share in flight: an answer schedules the next drain.
      if (!next) return;
      const { lane, wait } = next;
      if (wait > 0) {
        // Paced (it leads the others, or large requests wait their pace): its next request when its
        // pace allows; a request that arrives meanwhile drains at once.
        this.drainAfter(wait);
        return;
      }
      const job = lane.queue.shift()!;
      this.queuedCount--;
      this.touch(lane);
      if (job.big) this.bigInflight++;
      else this.smallAt = now;
      job.start();
      if (job.big || performance.now() - start >= this.sliceMs) break;
    }
    if (this.queuedCount > 0) this.scheduleDrain();
  }

  /**
   * The least-charged connection with a request waiting and room in its share (none: wait for an
   * answer), and how long its pace makes it wait (0: now).
   */
  private cheapest(now: number): { lane: Lane; wait: number } | undefined {
    let best: Lane | undefined;
    let bestUsed = Infinity;
    /**
     * The lane whose next request is large and has waited longest (cost classes: only when no small one
     * waits). Oldest first, not least charged: a client opening a connection per request is never
     * charged, and would otherwise always go before one that keeps its connection.
     */
    let big: Lane | undefined;
    let bigUsed = Infinity;
    let bigSince = Infinity;
    const share = this.share();
    // The two least charged connections that ran a request lately: the least charged other than `best`.
    let low: Lane | undefined;
    let lowUsed = Infinity;
    let secondUsed = Infinity;
    for (const lane of this.lanes.values()) {
      const recent = now - lane.at <= this.activeMs;
      if (!recent && lane.queue.length === 0) continue;
      const used = this.usedAt(lane, now);
      if (recent) {
        if (used < lowUsed) {
          secondUsed = lowUsed;
          low = lane;
          lowUsed = used;
        } else if (used < secondUsed) secondUsed = used;
      }
      if (lane.queue.length === 0 || lane.inflight >= share) continue;
      const head = lane.queue[0]!;
      if (head.big && !this.uncapped) {
        if (head.queuedAt < bigSince) {
          big = lane;
          bigUsed = used;
          bigSince = head.queuedAt;
        }
      } else if (used < bestUsed) {
        best = lane;
        bestUsed = used;
      }
    }
    if (!best && big) {
      // Only large requests wait: paced by size while small requests are being served.
      const busy = now - this.smallAt <= this.activeMs;
      // One at a time: the answer of the one in flight drains again (bigDone).
      if (busy && this.bigInflight > 0 && !this.uncapped) return undefined;
      const bigWait = busy ? Math.max(0, this.nextBigAt - now) : 0;
      best = big;
      bestUsed = bigUsed;
      if (bigWait > 0) return { lane: best, wait: bigWait };
    }
    if (!best || this.uncapped) return best && { lane: best, wait: 0 };
    const others = low === best ? secondUsed : lowUsed;
    if (others === Infinity || bestUsed <= this.lead * others + this.sliceMs) return { lane: best, wait: 0 };
    return { lane: best, wait: Math.max(0, best.startedAt + this.paceMs - now) };
  }
}
