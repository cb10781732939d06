/**
 * A forwarded request's cancellation. The deadline, the client going away or a newer request for the
 * same document (latest wins) abort it, and what the request waits on at that moment (its place in a
 * pool's queue, then the agent call) is told. An AbortController does the same through an EventTarget,
 * with a map of listeners and an event per abort: microseconds on every forwarded request, most of
 * which are never aborted (docs/performance.md, "The orchestrator hop").
 */
export class Cancellation {
  /**
   * The request's trace id, when it has one: an NDJSON `cancel` control line names it
   * (docs/aip-1.md, Control lines; `cancelTrace` below).
   */
  traceId: string | undefined;
  private why: Error | undefined;
  private waiter: ((reason: Error) => void) | undefined;

  get aborted(): boolean {
    return this.why !== undefined;
  }

  /** Why it was aborted (the first reason given); undefined while it is not. */
  get reason(): Error | undefined {
    return this.why;
  }

  /** Abort with `reason` and tell the current waiter; later aborts change nothing. */
  abort(reason: Error): void {
    if (this.why !== undefined) return;
    this.why = reason;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(reason);
  }

  /** Call `fn` if it is aborted while the caller waits (one waiter at a time: a new one replaces it). */
  onAbort(fn: (reason: Error) => void): void {
    this.waiter = fn;
  }

  /** The caller stopped waiting. */
  clear(): void {
    this.waiter = undefined;
  }
}

/** The cancellations following each client signal, behind the one listener that signal gets. */
const following = new WeakMap<AbortSignal, Set<Cancellation>>();

/**
 * Abort `cancel` with AIP_ERR_CANCELLED when `signal` aborts (the client went away), until `unfollow`.
 * A connection's signal serves all of its requests (protocol/transport/http.ts): it gets one EventTarget listener,
 * and each request only joins a set (an `addEventListener` and `removeEventListener` per request cost
 * microseconds, docs/performance.md).
 */
export function follow(signal: AbortSignal, cancel: Cancellation, reason: () => Error): void {
  if (signal.aborted) return cancel.abort(reason());
  let set = following.get(signal);
  if (set === undefined) {
    const members = (set = new Set());
    following.set(signal, members);
    signal.addEventListener(
      "abort",
      () => {
        for (const c of members) c.abort(reason());
        members.clear();
      },
      { once: true },
    );
  }
  set.add(cancel);
}

/** Stop following: `cancel` is finished. */
export function unfollow(signal: AbortSignal, cancel: Cancellation): void {
  following.get(signal)?.delete(cancel);
}

/**
 * An NDJSON `cancel` control line (docs/aip-1.md, Control lines): abort the cancellations following
 * `signal` (one connection's) whose trace id is `traceId`; how many were. A scan of the connection's
 * requests in flight (at most `maxPipelined`): cancelling is rare, and the common request pays nothing
 * for it.
 */
export function cancelTrace(signal: AbortSignal, traceId: string, reason: () => Error): number {
  const set = following.get(signal);
  if (set === undefined) return 0;
  let n = 0;
  for (const c of set) {
    if (c.traceId !== traceId) continue;
    c.abort(reason());
    set.delete(c);
    n++;
  }
  return n;
}
