/**
 * Per-stage budgets (the seed's figures). Synchronous stages cannot be interrupted in JavaScript:
 * their budget is checked when they end and an overrun is reported in the payload and the log; the
 * request's deadline is checked between stages. Inference is the one stage aborted at its limit.
 */
import type { HandlerContext } from "../lib/runtime/types.js";

export const STAGE_BUDGETS_MS = {
  accept: 5,
  slice: 15,
  prompt: 3,
  budget: 5,
  inference: 800,
  syntax: 8,
  response: 2,
} as const;
export type Stage = keyof typeof STAGE_BUDGETS_MS;

export class Stages {
  readonly overruns: { stage: Stage; ms: number; budget_ms: number }[] = [];
  constructor(private readonly ctx: HandlerContext) {}

  /** Close `stage` (time since the previous mark), record an overrun, stop when the request was aborted. */
  end(stage: Stage, signal: AbortSignal): number {
    const ms = this.ctx.timer.mark(stage);
    if (ms > STAGE_BUDGETS_MS[stage] && stage !== "inference" && stage !== "syntax")
      this.overruns.push({ stage, ms: round(ms), budget_ms: STAGE_BUDGETS_MS[stage] });
    signal.throwIfAborted();
    return ms;
  }

  /** Record an accumulated stage (inference and syntax run once per attempt). */
  total(stage: Stage, ms: number): void {
    if (ms > STAGE_BUDGETS_MS[stage]) this.overruns.push({ stage, ms: round(ms), budget_ms: STAGE_BUDGETS_MS[stage] });
  }
}

export function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
