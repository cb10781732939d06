/**
 * A model on an inference server, behind the same interface as the local one (engine.ts). Prompts are
 * built as tokens exactly as for a local model, with tiktoken's cl100k_base standing in for the
 * model's tokenizer (byte-level, so any cut of the text round-trips); the engine gets the text back,
 * and the prefix and suffix of a fill-in-the-middle prompt are kept apart by a marker token.
 */
import type { Token } from "node-llama-cpp";
import type { Logger } from "../../../../protocol/util/log.js";
import { enc } from "../budget.js";
import type { ModelConfig } from "../config.js";
import { UPSTREAM_BUCKETS_S } from "../../../../protocol/contract/model-engine.js";
import { isDeadline, noFallbacks, type ModelEngine } from "../engine.js";
import type { FimInfo } from "../fim.js";
import type { GenerateOptions, Generation, ModelState } from "../host.js";
import { TextMemo } from "../../memo.js";
import { Circuit } from "./circuit.js";
import { EngineClient, EngineError, type EngineErrorKind } from "./client.js";
import { FIM_TEMPLATES, type RemoteConfig } from "./config.js";

/** Between the prefix's and the suffix's tokens in a FIM prompt (tiktoken ids are never negative). */
const FIM_SPLIT = -1 as Token;
/** Recent upstream latencies kept for the percentiles in /healthz. */
const LATENCY_WINDOW = 512;
/** How long the start-up probe may take. */
const START_PROBE_MS = 5000;
const TOKEN_MEMO_ENTRIES = 1024;

const decoder = new TextDecoder();

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The FIM tokens a template names (for the payload's prompt.fim_tokens), when it is a known family's. */
function templateTokens(template: string | undefined): FimInfo["tokens"] {
  if (template === undefined) return undefined;
  const parts = template.split(/\{prefix\}|\{suffix\}/);
  const family = Object.entries(FIM_TEMPLATES).find(([, t]) => t === template);
  if (!family || parts.length !== 3) return undefined;
  const [a, b, c] = parts as [string, string, string];
  const prefixFirst = template.indexOf("{prefix}") < template.indexOf("{suffix}");
  const [pre, suf] = prefixFirst ? [a, b] : [b, a];
  return {
    prefix: { id: -2 as Token, text: pre.trim() },
    suffix: { id: -3 as Token, text: suf.trim() },
    middle: { id: -4 as Token, text: c.trim() },
  };
}

export class RemoteHost implements ModelEngine {
  readonly kind = "remote";
  /** Ready from the start: the engine's reachability is the circuit's business, not a state of this process. */
  state: ModelState = { status: "ready" };
  fim: FimInfo;
  readonly piecewise = true;
  readonly client: EngineClient;
  readonly circuit: Circuit;
  readonly fallbacks = noFallbacks();
  /** Counters for /healthz and /metrics. */
  readonly stats = {
    requests: 0,
    errors: {} as Partial<Record<EngineErrorKind, number>>,
    cancelled: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    latency_ms_sum: 0,
    /** Per UPSTREAM_BUCKETS_S bound (not cumulative); slower ones only in the count. */
    latency_buckets: UPSTREAM_BUCKETS_S.map(() => 0),
    generations: 0,
    generatedTokens: 0,
  };
  private reachable = false;
  private lastError: { kind: string; message: string; at: string } | undefined;
  private readonly latencies: number[] = [];
  private log: Logger | undefined;
  private readonly tokenMemo = new TextMemo<Token[]>(TOKEN_MEMO_ENTRIES);

  constructor(
    readonly config: ModelConfig,
    readonly remote: RemoteConfig,
  ) {
    this.client = new EngineClient(remote);
    this.circuit = new Circuit(
      remote.circuitFailures,
      remote.reprobeMs,
      () => this.probe(AbortSignal.timeout(Math.min(remote.timeoutMs, START_PROBE_MS))),
      (state, reason) =>
        this.log?.[state === "open" ? "warn" : "info"](
          { event: "model_circuit", state, engine: this.client.origin, model: remote.model, reason },
          `inference server circuit ${state}`,
        ),
    );
    // Every dialect fills in the middle; the template's tokens are named for the payload.
    const tokens = templateTokens(remote.template);
    this.fim = { available: true, format: "fim", ok: true, ...(tokens ? { tokens } : {}) };
  }

  get ready(): boolean {
    return this.state.status === "ready";
  }

  get contextSize(): number {
    return this.remote.contextSize;
  }

  unavailable(): string | undefined {
    return this.circuit.open ? (this.circuit.reason ?? "the inference server is not answering") : undefined;
  }

  /** Checks the engine once (no prompt); a failure opens the circuit, which keeps probing. Never throws. */
  async load(log?: Logger): Promise<void> {
    this.log = log;
    try {
      await this.probe(AbortSignal.timeout(Math.min(this.remote.timeoutMs, START_PROBE_MS)));
      log?.info(
        { event: "model_engine", engine: this.client.origin, model: this.remote.model, dialect: this.remote.fim },
        "inference server reachable",
      );
    } catch (err) {
      const e = err instanceof EngineError ? err : new EngineError("timeout", "the start-up probe timed out");
      this.circuit.failure(e);
      this.circuit.trip(this.remote.reprobeMs);
    }
  }

  private async probe(signal: AbortSignal): Promise<void> {
    try {
      await this.client.probe(signal);
      this.reachable = true;
    } catch (err) {
      const e =
        err instanceof EngineError
          ? err
          : new EngineError("timeout", `${this.client.origin} did not answer the probe in time`);
      this.noteError(e);
      throw e;
    }
  }

  private noteError(e: EngineError): void {
    this.stats.errors[e.kind] = (this.stats.errors[e.kind] ?? 0) + 1;
    // Reached and answering, only not as hoped: the engine is up.
    this.reachable = e.kind === "model_not_found" || e.kind === "rate_limited" || e.kind === "http";
    this.lastError = { kind: e.kind, message: e.message, at: new Date().toISOString() };
    this.log?.warn({ event: "model_engine_error", kind: e.kind, err: e.message }, "inference server request failed");
  }

  /** Nothing to warm: the engine's own process holds the model. */
  async selfProbe(): Promise<void> {}

  tokenize(text: string): Token[] {
    return text === "" ? [] : (Array.from(enc().encode_ordinary(text)) as Token[]);
  }

  tokenizeStable(text: string): readonly Token[] {
    return this.tokenMemo.get(text, (t) => this.tokenize(t));
  }

  detokenize(tokens: readonly Token[]): string {
    return tokens.length === 0 ? "" : decoder.decode(enc().decode(Uint32Array.from(tokens as readonly number[])));
  }

  fimPrompt(prefix: readonly Token[], suffix: readonly Token[]): Token[] {
    return [...prefix, FIM_SPLIT, ...suffix];
  }

  async generate(prompt: Token[], options: GenerateOptions): Promise<Generation> {
    if (!this.ready) throw new Error("model not loaded");
    if (this.circuit.open)
      throw new EngineError("unavailable", `The inference server's circuit is open: ${this.unavailable()}`);
    const split = prompt.indexOf(FIM_SPLIT);
    const prefix = this.detokenize(split < 0 ? prompt : prompt.slice(0, split));
    const suffix = split < 0 ? undefined : this.detokenize(prompt.slice(split + 1));
    const started = performance.now();
    // Engines bound the request too (AIP_MODEL_TIMEOUT_MS) when the caller's deadline is longer.
    const cap = AbortSignal.timeout(this.remote.timeoutMs);
    const signal = AbortSignal.any([options.signal, cap]);
    this.stats.requests++;
    try {
      const answer = await this.client.complete({
        prefix,
        ...(suffix !== undefined ? { suffix } : {}),
        maxTokens: options.maxTokens,
        temperature: options.temperature,
        seed: options.seed,
        stop: options.stop,
        signal,
      });
      this.reachable = true;
      this.circuit.success();
      const promptTokens = answer.promptTokens ?? prompt.length - (split < 0 ? 0 : 1);
      const tokens = answer.completionTokens ?? this.tokenize(answer.text).length;
      this.stats.prompt_tokens += promptTokens;
      this.stats.completion_tokens += tokens;
      this.stats.generations++;
      this.stats.generatedTokens += tokens;
      this.stats.latency_ms_sum += answer.ms;
      this.latencies.push(answer.ms);
      const bucket = UPSTREAM_BUCKETS_S.findIndex((le) => answer.ms / 1000 <= le);
      if (bucket >= 0) this.stats.latency_buckets[bucket]!++;
      if (this.latencies.length > LATENCY_WINDOW) this.latencies.shift();
      return {
        text: answer.text,
        tokens,
        kvReused: 0,
        promptTokens,
        stopReason: answer.stopReason,
        sequence: -1,
        ms: performance.now() - started,
      };
    } catch (err) {
      if (signal.aborted) {
        const reason: unknown = options.signal.aborted ? options.signal.reason : cap.reason;
        if (isDeadline(reason)) {
          // An engine that lets a deadline pass counts as failing; a cancelled request does not.
          const e = new EngineError(
            "timeout",
            `${this.client.origin} did not finish within ${Math.round(performance.now() - started)} ms`,
          );
          this.noteError(e);
          this.circuit.failure(e);
          if (!options.signal.aborted) throw e;
        } else this.stats.cancelled++;
        throw reason;
      }
      const e =
        err instanceof EngineError ? err : new EngineError("protocol", `Inference failed: ${(err as Error).message}`);
      this.noteError(e);
      this.circuit.failure(e);
      throw e;
    }
  }

  /** The engine as /healthz shows it (the key's file is named; the key never is). */
  engineHealth(): Record<string, unknown> {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return {
      kind: "remote",
      url: this.remote.url,
      model: this.remote.model,
      dialect: this.remote.fim,
      stream: this.remote.stream,
      reachable: this.reachable,
      last_error: this.lastError ?? null,
      circuit: this.circuit.toJSON(),
      key_file: this.remote.keyFile ?? null,
      requests: this.stats.requests,
      cancelled: this.stats.cancelled,
      errors: { ...this.stats.errors },
      prompt_tokens: this.stats.prompt_tokens,
      completion_tokens: this.stats.completion_tokens,
      latency_ms: {
        sum: Math.round(this.stats.latency_ms_sum * 100) / 100,
        count: this.stats.generations,
        p50: Math.round(percentile(sorted, 50) * 100) / 100,
        p95: Math.round(percentile(sorted, 95) * 100) / 100,
        buckets: [...this.stats.latency_buckets],
      },
      fallbacks: { ...this.fallbacks },
    };
  }

  health(): Record<string, unknown> {
    return {
      model: this.remote.model,
      model_state: this.state.status,
      context_size: this.contextSize,
      prompt_format: "fim",
      model_engine: this.engineHealth(),
    };
  }

  async dispose(): Promise<void> {
    this.circuit.stop();
    if (this.ready) this.state = { status: "failed", reason: "the model was disposed" };
    await this.client.close();
  }
}
