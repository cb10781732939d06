/** An agent's pool: slots and queue (base), a sizing strategy, latency stats, and the transport. */
import type { Cancellation } from "../../protocol/transport/cancel.js";
import { LatencyWindow } from "./stats.js";
import { Slots, type SlotStats } from "./slots.js";
import { adaptiveSizing, type SizingStrategy } from "./sizing.js";
import { AgentCosts, NOT_HELD, type AgentCost, type CostDone } from "./cost.js";
import type { Transport, TransportFactory } from "./transport.js";

/** Calls per window over which the peak demand is taken (the latency window's length). */
const DEMAND_WINDOW_CALLS = 100;

export interface PoolStats extends SlotStats {
  strategy: string;
  p95_ms: number;
  calls: number;
}

export interface AgentPoolOptions {
  label: string;
  socketPath: string;
  maxConcurrent: number;
  maxQueue: number;
  transport: TransportFactory;
  sizing?: SizingStrategy;
  /** The orchestrator's agents, compared for cost classes (./cost.ts); unset: this pool alone, never paced. */
  costs?: AgentCosts;
}

export class AgentPool {
  readonly latency = new LatencyWindow(100);
  private readonly slots: Slots;
  private readonly transport: Transport;
  private readonly sizing: SizingStrategy;
  private readonly maxConcurrent: number;
  /** Its calls' mean time against other agents': a CPU-heavy agent is paced while others are served (./cost.ts). */
  readonly cost: AgentCost;
  private calls = 0;
  /** Peak demand in the current and the previous window of DEMAND_WINDOW_CALLS calls. */
  private peakNow = 0;
  private peakBefore = 0;
  private windowCalls = 0;

  constructor(options: AgentPoolOptions) {
    this.sizing = options.sizing ?? adaptiveSizing;
    this.maxConcurrent = options.maxConcurrent;
    this.slots = new Slots(this.sizing.initial(options.maxConcurrent), options.maxQueue, options.label);
    this.transport = options.transport(options.socketPath, options.maxConcurrent);
    this.cost = (options.costs ?? new AgentCosts()).add();
  }

  get size(): number {
    return this.slots.size;
  }

  /** Callers waiting for a slot (what the router's load reads per request; stats() is for /healthz). */
  get queued(): number {
    return this.slots.queued;
  }

  stats(): PoolStats {
    return { ...this.slots.stats(), strategy: this.sizing.name, p95_ms: round(this.latency.p95()), calls: this.calls };
  }

  /**
   * Wait for a slot (bounded queue shared fairly between client connections, until the deadline);
   * resolves with its release function.
   */
  acquire(deadline: number, cancel?: Cancellation, connection?: number): Promise<() => void> {
    // Its turn first while the agent is heavy (./cost.ts); a function when it is at once (the common case).
    const turn = this.cost.turn();
    if (typeof turn === "function") return this.slot(turn, deadline, cancel, connection);
    return turn.then((done) => this.slot(done, deadline, cancel, connection));
  }

  private slot(done: CostDone, deadline: number, cancel?: Cancellation, connection?: number): Promise<() => void> {
    // A caller about to wait is demand the strategy may meet at once.
    this.resize(this.demand() + 1);
    if (done === NOT_HELD) return this.slots.acquire(deadline, cancel, connection);
    return this.slots.acquire(deadline, cancel, connection).then(
      (release) => () => {
        release();
        done();
      },
      (err: unknown) => {
        done();
        throw err;
      },
    );
  }

  /** Send through the transport in an acquired slot; resolves with the agent's answer. */
  send(body: string, cancel: Cancellation): Promise<string | object> {
    return this.transport.send(body, cancel);
  }

  /** Record a finished call's latency and let the strategy resize the pool. */
  record(ms: number): void {
    this.calls++;
    this.latency.record(ms);
    this.cost.record(ms);
    if (++this.windowCalls >= DEMAND_WINDOW_CALLS) {
      this.windowCalls = 0;
      this.peakBefore = this.peakNow;
      this.peakNow = 0;
    }
    this.resize(this.demand());
  }

  /** Calls in flight plus callers waiting. */
  private demand(): number {
    return this.slots.inflight + this.slots.queued;
  }

  private resize(now: number): void {
    this.peakNow = Math.max(this.peakNow, now);
    const next = this.sizing.next(
      this.slots.size,
      { now, peak: Math.max(this.peakNow, this.peakBefore) },
      this.maxConcurrent,
    );
    if (next !== this.slots.size) this.slots.resize(next);
  }

  failQueued(err: Error): void {
    this.slots.failQueued(err);
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
