/**
 * The deadlines of many requests behind one timer (docs/performance.md, "The orchestrator hop"). A
 * request joins when it starts and leaves when it is answered, a set insertion and deletion each; the
 * one timer is armed for the earliest deadline and, when it fires, expires what is due and is armed
 * again for the earliest left. Most requests are answered long before their deadline and never create,
 * insert or cancel a timer of their own (a `setTimeout` and `clearTimeout` per request cost
 * microseconds). The timer keeps the process alive only while a request is waiting.
 */
export interface Expiring {
  /** The time on the set's clock (`performance.now()` unless given) at which it expires. */
  readonly expiresAt: number;
  /** The deadline passed: called once, after it left the set. */
  expire(): void;
}

export class Deadlines {
  private readonly members = new Set<Expiring>();
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires; Infinity while none is armed. */
  private armedFor = Infinity;
  private readonly fire = (): void => this.onTimer();

  /** `now`: the clock deadlines are read on (ms; tests pass one they control). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  get size(): number {
    return this.members.size;
  }

  /** Expire `member` at its `expiresAt`, unless it is deleted first. */
  add(member: Expiring): void {
    this.members.add(member);
    if (member.expiresAt < this.armedFor) this.arm(member.expiresAt);
    else if (this.members.size === 1) this.timer?.ref();
  }

  /** The request was answered: its deadline no longer applies. */
  delete(member: Expiring): void {
    // The timer stays armed (most requests end before it fires), but holds the process only while needed.
    if (this.members.delete(member) && this.members.size === 0) this.timer?.unref();
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedFor = at;
    // A timer fires up to a millisecond before `at` by performance.now() (libuv counts whole
    // milliseconds): then it is armed again for what is left.
    this.timer = setTimeout(this.fire, Math.max(1, Math.ceil(at - this.now())));
  }

  private onTimer(): void {
    this.timer = undefined;
    this.armedFor = Infinity;
    const now = this.now();
    const due: Expiring[] = [];
    for (const m of this.members) if (m.expiresAt <= now) due.push(m);
    for (const m of due) this.members.delete(m);
    // Those due together (a late timer) expire earliest first.
    if (due.length > 1) due.sort((a, b) => a.expiresAt - b.expiresAt);
    // Expiring may add or delete members (a request's answer, the next request): each is called after
    // the set holds only what is not due.
    for (const m of due) m.expire();
    let next = Infinity;
    for (const m of this.members) if (m.expiresAt < next) next = m.expiresAt;
    if (next < this.armedFor) this.arm(next);
  }
}
