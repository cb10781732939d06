/**
 * Cost classes between agents (docs/architecture.md, "Fair sharing between connections"). Fair turns pace large
 * requests at the front door (protocol/transport/turns.ts), but a small request can cost an agent far more CPU
 * than it costs the orchestrator: a search over a workspace, a summary of deep source. On a machine
 * whose cores the agents share with the orchestrator, a client that keeps such an agent busy takes CPU
 * from every other client's requests, to other agents too.
 *
 * - Each agent's pool keeps the mean time of its recent calls (an exponential average of the wall time
 *   from sending a request to its answer, `AgentCost.record`).
 * - An agent is heavy while that mean is at least `HEAVY_MIN_MS` and `HEAVY_RATIO` times the mean of the
 *   cheapest other agent that answered a call in the last `HEAVY_ACTIVE_MS` (cheap requests are being
 *   served beside it).
 * - While heavy, its calls go one at a time, and the next starts no sooner than the last one took after
 *   its answer (at most `HEAVY_MAX_PACE_MS`): the agent runs at most half the time while others are
 *   served, and all it can once they are quiet.
 * - A call waits at most `HEAVY_MAX_WAIT_MS` for its turn, then starts anyway: nothing starves and
 *   nothing is refused (the pool's slots and queue apply after, as before).
 */
import { performance } from "node:perf_hooks";

/** An agent whose recent calls take less than this (ms) is never heavy. */
export const HEAVY_MIN_MS = 2;
/** Heavy: its mean call time is at least this many times the cheapest other active agent's. */
export const HEAVY_RATIO = 4;
/** Another agent that answered a call this recently (ms) is being served beside it. */
export const HEAVY_ACTIVE_MS = 100;
/** A heavy agent's next call waits at most this long (ms) after the previous one's answer. */
export const HEAVY_MAX_PACE_MS = 50;
/** A call waits at most this long (ms) for its turn, then starts anyway. */
export const HEAVY_MAX_WAIT_MS = 250;
/** Weight of the newest call in the mean. */
const MEAN_WEIGHT = 0.2;

/** Called when the call that held the turn is answered (or failed). */
export type CostDone = () => void;

/** The turn of a call to an agent that is not heavy: nothing to give back. */
export const NOT_HELD: CostDone = () => undefined;

/** The agents of one orchestrator, compared with each other. */
export class AgentCosts {
  private readonly agents = new Set<AgentCost>();

  /** `now`: the clock every comparison reads (ms; tests pass one they control). */
  constructor(readonly now: () => number = () => performance.now()) {}

  /** The cost record of a new agent pool. */
  add(): AgentCost {
    const cost = new AgentCost(this);
    this.agents.add(cost);
    return cost;
  }

  remove(cost: AgentCost): void {
    this.agents.delete(cost);
  }

  /** The least mean call time of the agents other than `self` that answered lately; Infinity if none. */
  cheapestOther(self: AgentCost, now: number): number {
    let least = Infinity;
    for (const a of this.agents)
      if (a !== self && now - a.answeredAt <= HEAVY_ACTIVE_MS && a.meanMs < least) least = a.meanMs;
    return least;
  }
}

interface Waiter {
  go: () => void;
  timer: NodeJS.Timeout;
}

export class AgentCost {
  /** Mean call time, ms (NaN before the first call). */
  meanMs = NaN;
  /** When its last call was answered. */
  answeredAt = -Infinity;
  /** Calls started through a heavy turn and not yet answered. */
  private held = 0;
  /** When the next call may start while heavy. */
  private nextAt = -Infinity;
  private readonly waiters: Waiter[] = [];
  private paceTimer: NodeJS.Timeout | undefined;

  constructor(private readonly costs: AgentCosts) {}

  /** A call was answered in `ms`. */
  record(ms: number): void {
    this.meanMs = Number.isNaN(this.meanMs) ? ms : this.meanMs + MEAN_WEIGHT * (ms - this.meanMs);
    this.answeredAt = this.costs.now();
  }

  /** Heavy now: its calls go one at a time, paced. */
  heavy(now = this.costs.now()): boolean {
    if (!(this.meanMs >= HEAVY_MIN_MS)) return false;
    return this.meanMs >= HEAVY_RATIO * this.costs.cheapestOther(this, now);
  }

  /**
   * The call's turn: at once (the returned function, to call at its answer) unless the agent is heavy
   * and another call holds the turn or the pace is not over; then a promise of it.
   */
  turn(): CostDone | Promise<CostDone> {
    const now = this.costs.now();
    if (this.waiters.length === 0 && (!this.heavy(now) || (this.held === 0 && now >= this.nextAt))) return this.grant();
    return new Promise<CostDone>((resolve) => {
      const waiter: Waiter = {
        go: () => resolve(this.grant()),
        // Waited long enough: it starts beside the one holding the turn.
        timer: setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i !== -1) this.waiters.splice(i, 1);
          waiter.go();
        }, HEAVY_MAX_WAIT_MS),
      };
      this.waiters.push(waiter);
      this.pump();
    });
  }

  private grant(): CostDone {
    if (!this.heavy()) return NOT_HELD;
    this.held++;
    const t0 = this.costs.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.held--;
      const now = this.costs.now();
      this.nextAt = Math.max(this.nextAt, now + Math.min(now - t0, HEAVY_MAX_PACE_MS));
      this.pump();
    };
  }

  /** Start waiting calls whose turn has come. */
  private pump(): void {
    while (this.waiters.length > 0) {
      const now = this.costs.now();
      if (this.heavy(now)) {
        if (this.held > 0) return; // its answer pumps again
        if (now < this.nextAt) {
          if (this.paceTimer === undefined)
            this.paceTimer = setTimeout(() => {
              this.paceTimer = undefined;
              this.pump();
            }, this.nextAt - now);
          return;
        }
      }
      const waiter = this.waiters.shift()!;
      clearTimeout(waiter.timer);
      waiter.go();
    }
  }
}
