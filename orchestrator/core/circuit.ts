/**
 * An agent's circuit breaker: it opens after `threshold` consecutive failures the agent caused (docs/operations.md,
 * Failures), stays open until a health probe succeeds, and any success in between resets the count.
 */
export interface CircuitView {
  open: boolean;
  failures: number;
  opened_at: string | null;
}

export class Circuit {
  #open = false;
  #failures = 0;
  #openedAt: string | null = null;

  get open(): boolean {
    return this.#open;
  }

  get failures(): number {
    return this.#failures;
  }

  get openedAt(): string | null {
    return this.#openedAt;
  }

  /** One more failure caused by the agent; true when this one opened the circuit. */
  recordFailure(threshold: number): boolean {
    this.#failures++;
    if (this.#open || this.#failures < threshold) return false;
    this.#open = true;
    this.#openedAt = new Date().toISOString();
    return true;
  }

  /** An answer from the agent: the failures in a row start again from zero (an open circuit stays open). */
  recordSuccess(): void {
    this.#failures = 0;
  }

  /** The agent is known good again (ready after a start, or a health probe passed): closed and reset. */
  close(): void {
    this.#open = false;
    this.#failures = 0;
    this.#openedAt = null;
  }

  toJSON(): CircuitView {
    return { open: this.#open, failures: this.#failures, opened_at: this.#openedAt };
  }
}
