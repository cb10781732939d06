/**
 * What a model-backed stage needs of its model, wherever it runs: a GGUF file loaded in the process
 * (ModelHost) or an inference server (RemoteHost). The stages see one interface and one prompt format
 * (tokens), so deadlines, the token budget and the syntax gate are the same code for both.
 */
import type { Token } from "node-llama-cpp";
import type { Logger } from "../../../protocol/util/log.js";
import type { ModelConfig } from "./config.js";
import type { FimInfo } from "./fim.js";
import type { GenerateOptions, Generation, ModelState } from "./host.js";

/** Why the model was not asked: the answer came from the model-free engine instead. */
export type FallbackReason = "syntax_gate" | "circuit_open" | "engine_error";

export interface ModelEngine {
  readonly kind: "local" | "remote";
  readonly config: ModelConfig;
  state: ModelState;
  readonly ready: boolean;
  fim: FimInfo;
  readonly contextSize: number;
  readonly piecewise: boolean;
  load(log?: Logger): Promise<void>;
  selfProbe(): Promise<void>;
  tokenize(text: string): Token[];
  tokenizeStable(text: string): readonly Token[];
  detokenize(tokens: readonly Token[]): string;
  fimPrompt(prefix: readonly Token[], suffix: readonly Token[]): Token[];
  generate(prompt: Token[], options: GenerateOptions): Promise<Generation>;
  /**
   * Undefined when requests may go to the model now; else why not (a remote engine's open circuit).
   * A local model that is not ready says so through `state` instead.
   */
  unavailable(): string | undefined;
  /** Model answers replaced by the model-free engine's, by reason (reported in /healthz, counted in /metrics). */
  readonly fallbacks: Record<FallbackReason, number>;
  health(): Record<string, unknown>;
  dispose(): Promise<void>;
}

/** An abort that is a deadline (the stage's limit), not the caller's cancellation: an engine that let it pass counts as failing. */
export class DeadlineAbort extends Error {}

export function isDeadline(reason: unknown): boolean {
  return reason instanceof DeadlineAbort || (reason instanceof DOMException && reason.name === "TimeoutError");
}

export function noFallbacks(): Record<FallbackReason, number> {
  return { syntax_gate: 0, circuit_open: 0, engine_error: 0 };
}
