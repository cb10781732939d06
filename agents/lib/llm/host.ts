/**
 * The loaded model, shared by complete and summarize: loaded once, one context with a sequence per
 * in-flight request, sequences handed out by longest shared token prefix so the KV cache is reused.
 */
import { stat } from "node:fs/promises";
import type { Llama, LlamaCompletion, LlamaContext, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import type { Logger } from "../../../protocol/util/log.js";
import type { ModelConfig } from "./config.js";
import { TextMemo } from "../memo.js";
import { detectFim, fimRoundTrips, type FimInfo } from "./fim.js";
import { noFallbacks, type ModelEngine } from "./engine.js";

export interface GenerateOptions {
  maxTokens: number;
  /** 0 = greedy. */
  temperature: number;
  seed: number;
  stop: string[];
  signal: AbortSignal;
}

export interface Generation {
  text: string;
  tokens: number;
  /** Prompt tokens whose KV state was already in the sequence (not evaluated again; from the sequence's token meter). */
  kvReused: number;
  promptTokens: number;
  stopReason: string;
  sequence: number;
  ms: number;
}

export type ModelState =
  | { status: "none"; reason: string }
  | { status: "loading" }
  | { status: "ready" }
  | { status: "failed"; reason: string };

interface Slot {
  id: number;
  seq: LlamaContextSequence;
  /** Reused for every generation on this sequence (one at a time): a new one per request made garbage of its size. */
  completion: LlamaCompletion;
  busy: boolean;
}

function commonPrefix(a: readonly Token[], b: readonly Token[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * Texts whose tokens `tokenizeStable` keeps (least recently used dropped first): the pieces of recent
 * prompts and the file chunks prewarm.ts tokenises ahead (PREWARM_MAX_CHUNKS of them, 16 lines each).
 */
const TOKEN_MEMO_ENTRIES = 1024;

/** Pieces of code as prompts are cut (at line starts): does tokenising them apart and joining the tokens round-trip? */
function tokenizesPiecewise(model: LlamaModel): boolean {
  const pieces = [
    "export function f(a: number) {\n",
    "  const b = a + 1; // note\n",
    "\n",
    "  return b",
    ";\n}\n",
    "\tx",
  ];
  const tokens = pieces.flatMap((p) => model.tokenize(p, false));
  return model.detokenize(tokens, false) === pieces.join("");
}

export class ModelHost implements ModelEngine {
  readonly kind = "local";
  readonly fallbacks = noFallbacks();
  state: ModelState;
  fim: FimInfo = { available: false, format: "prefix" };
  /** Whole start: native bindings + model + context. */
  loadMs = 0;
  /** The model file alone (loadModel). */
  modelLoadMs = 0;
  modelBytes = 0;
  private llama?: Llama;
  private model?: LlamaModel;
  private context?: LlamaContext;
  private slots: Slot[] = [];
  private waiters: {
    resolve: (s: Slot) => void;
    reject: (e: unknown) => void;
    signal: AbortSignal;
    onAbort: () => void;
  }[] = [];
  /** Counters for /healthz and tests. */
  readonly stats = { generations: 0, aborted: 0, promptTokens: 0, generatedTokens: 0, kvReusedTokens: 0, peakBusy: 0 };

  constructor(readonly config: ModelConfig) {
    this.state =
      config.path === undefined
        ? { status: "none", reason: "No model configured: set AIP_MODEL to a .gguf file" }
        : { status: "loading" };
  }

  get ready(): boolean {
    return this.state.status === "ready";
  }

  /** A loaded model is always there to ask (its state says when it is not loaded). */
  unavailable(): string | undefined {
    return undefined;
  }

  /** Load the model and create the context; failure leaves the host in state "failed" with the reason (never throws). */
  async load(log?: Logger): Promise<void> {
    const path = this.config.path;
    if (path === undefined) return;
    const started = performance.now();
    try {
      this.modelBytes = (await stat(path)).size;
      // Loaded here, not at the agent's start: without a model (the default) the bindings are never
      // needed, and their import would delay every agent that may host one from answering.
      const { getLlama, LlamaCompletion, LlamaLogLevel } = await import("node-llama-cpp");
      this.llama = await getLlama({
        gpu: this.config.gpuLayers > 0 ? "auto" : false,
        build: "never",
        logLevel: LlamaLogLevel.error,
        logger: (level, message) => log?.warn({ event: "llama_log", level, detail: message.trim() }, message.trim()),
      });
      const t0 = performance.now();
      this.model = await this.llama.loadModel({ modelPath: path, gpuLayers: this.config.gpuLayers });
      this.modelLoadMs = performance.now() - t0;
      this.context = await this.model.createContext({
        contextSize: Math.min(this.config.contextSize, this.model.trainContextSize),
        sequences: this.config.sequences,
        threads: this.config.threads,
      });
      this.slots = Array.from({ length: this.config.sequences }, (_, id) => {
        const seq = this.context!.getSequence();
        return { id, seq, completion: new LlamaCompletion({ contextSequence: seq }), busy: false };
      });
      this.fim = detectFim(this.model);
      this.piecewise = tokenizesPiecewise(this.model);
      this.loadMs = performance.now() - started;
      this.state = { status: "ready" };
      log?.info(
        {
          event: "model_loaded",
          path,
          load_ms: Math.round(this.loadMs),
          context_size: this.contextSize,
          sequences: this.config.sequences,
          threads: this.config.threads,
          fim: this.fim.available,
        },
        "model loaded",
      );
    } catch (err) {
      this.state = { status: "failed", reason: `Model ${path} failed to load: ${(err as Error).message}` };
      log?.error({ event: "model_load_failed", path, err: (err as Error).message }, "model failed to load");
      await this.dispose();
      this.state = { status: "failed", reason: `Model ${path} failed to load: ${(err as Error).message}` };
    }
  }

  /** Tokens one sequence holds. */
  get contextSize(): number {
    return this.context?.contextSize ?? 0;
  }

  get trainContextSize(): number {
    return this.model?.trainContextSize ?? 0;
  }

  get busySequences(): number {
    return this.slots.filter((s) => s.busy).length;
  }

  /** The model's tokenizer (special-token text in code is not turned into special tokens). */
  tokenize(text: string): Token[] {
    if (text === "") return [];
    return this.requireModel().tokenize(text, false);
  }

  /**
   * True when tokenising text in pieces split at line starts gives back the same text (checked at
   * load): byte-level BPE vocabularies do; a SentencePiece vocabulary that adds a space prefix to every
   * call does not, and then prompts are tokenised whole.
   */
  piecewise = false;

  private readonly tokenMemo = new TextMemo<Token[]>(TOKEN_MEMO_ENTRIES);

  /**
   * `tokenize`, remembered for the last few texts: the parts of a prompt that stay the same from one
   * keystroke to the next (header, symbols, farther code) are tokenised once. The returned array is shared: do not mutate it.
   */
  tokenizeStable(text: string): readonly Token[] {
    return this.tokenMemo.get(text, (t) => this.tokenize(t));
  }

  detokenize(tokens: readonly Token[]): string {
    return this.requireModel().detokenize(tokens, false);
  }

  private requireModel(): LlamaModel {
    if (!this.model) throw new Error("model not loaded");
    return this.model;
  }

  /** A free sequence, preferring the one whose cached tokens share the longest prefix with `prompt`; waits (abortably) when all are busy. */
  private acquire(prompt: readonly Token[], signal: AbortSignal): Promise<Slot> {
    signal.throwIfAborted();
    const free = this.slots.filter((s) => !s.busy);
    if (free.length > 0) {
      let best = free[0]!;
      let bestLen = -1;
      for (const s of free) {
        const len = commonPrefix(s.seq.contextTokens, prompt);
        if (len > bestLen) [best, bestLen] = [s, len];
      }
      best.busy = true;
      this.stats.peakBusy = Math.max(this.stats.peakBusy, this.busySequences);
      return Promise.resolve(best);
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(signal.reason);
        },
      };
      signal.addEventListener("abort", waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private release(slot: Slot): void {
    const next = this.waiters.shift();
    if (next) {
      next.signal.removeEventListener("abort", next.onAbort);
      next.resolve(slot); // handed over still busy
      return;
    }
    slot.busy = false;
  }

  /** Generate from prompt tokens (BOS is added by node-llama-cpp); aborts with `signal.reason` when the signal fires. */
  async generate(prompt: Token[], options: GenerateOptions): Promise<Generation> {
    if (!this.ready) throw new Error("model not loaded");
    const slot = await this.acquire(prompt, options.signal);
    const started = performance.now();
    const { completion } = slot;
    try {
      const meter = slot.seq.tokenMeter;
      const [in0, out0] = [meter.usedInputTokens, meter.usedOutputTokens];
      const res = await completion.generateCompletionWithMeta(prompt, {
        maxTokens: options.maxTokens,
        temperature: options.temperature,
        seed: options.seed,
        ...(options.temperature > 0 ? { topK: 40, topP: 0.95 } : {}),
        repeatPenalty: false,
        customStopTriggers: options.stop,
        signal: options.signal,
      });
      // The sequence's token meter is the ground truth: prompt tokens evaluated now vs. already in the KV cache.
      const evaluated = meter.usedInputTokens - in0;
      const tokens = meter.usedOutputTokens - out0;
      const kvReused = Math.max(0, prompt.length - evaluated);
      this.stats.generations++;
      this.stats.generatedTokens += tokens;
      this.stats.promptTokens += prompt.length;
      this.stats.kvReusedTokens += kvReused;
      return {
        text: res.response,
        tokens,
        kvReused,
        promptTokens: prompt.length,
        stopReason: res.metadata.stopReason,
        sequence: slot.id,
        ms: performance.now() - started,
      };
    } catch (err) {
      if (options.signal.aborted) this.stats.aborted++;
      throw err;
    } finally {
      this.release(slot);
    }
  }

  /** The prompt for one FIM request: prefix, suffix and middle markers around the tokenized text. */
  fimPrompt(prefix: readonly Token[], suffix: readonly Token[]): Token[] {
    const t = this.fim.tokens!;
    return [t.prefix.id, ...prefix, t.suffix.id, ...suffix, t.middle.id];
  }

  /** Start-up self-probe: warms the model (one token) and, for a FIM vocabulary, checks the FIM tokens round-trip and a FIM prompt generates. */
  async selfProbe(): Promise<void> {
    if (!this.ready) return;
    const signal = AbortSignal.timeout(30_000);
    const base = { maxTokens: 1, temperature: 0, seed: 0, stop: [], signal };
    try {
      if (this.fim.available) {
        if (!fimRoundTrips(this.model!, this.fim)) throw new Error("the FIM tokens do not tokenize back to themselves");
        await this.generate(this.fimPrompt(this.tokenize("function f() {\n  return "), this.tokenize(";\n}\n")), base);
        this.fim.ok = true;
      } else {
        await this.generate(this.tokenize("function f() {\n"), base);
      }
    } catch (err) {
      this.fim.ok = false;
      this.fim.probe_error = (err as Error).message;
      // A FIM prompt that does not work falls back to the prefix format.
      this.fim.format = "prefix";
    }
    for (const s of this.slots) await s.seq.clearHistory();
  }

  health(): Record<string, unknown> {
    return {
      model: this.config.path ?? null,
      model_state: this.state.status,
      model_engine: {
        kind: "local",
        model: this.config.path ?? null,
        reachable: this.ready,
        last_error: this.state.status === "failed" ? { kind: "load", message: this.state.reason } : null,
        prompt_tokens: this.stats.promptTokens,
        completion_tokens: this.stats.generatedTokens,
        fallbacks: { ...this.fallbacks },
      },
      ...(this.ready
        ? {
            model_bytes: this.modelBytes,
            load_ms: Math.round(this.loadMs),
            model_load_ms: Math.round(this.modelLoadMs),
            context_size: this.contextSize,
            sequences: this.config.sequences,
            sequences_busy: this.busySequences,
            threads: this.config.threads,
            gpu_layers: this.config.gpuLayers,
            prompt_format: this.fim.format,
            piecewise_tokenization: this.piecewise,
            fim_ok: this.fim.ok ?? false,
            inference: { ...this.stats },
          }
        : {}),
    };
  }

  async dispose(): Promise<void> {
    // Not ready from here on: nothing may tokenise or generate with a model being freed.
    if (this.ready) this.state = { status: "failed", reason: "the model was disposed" };
    for (const w of this.waiters) w.reject(new Error("model disposed"));
    for (const s of this.slots) s.completion.dispose({ disposeSequence: false });
    this.waiters = [];
    await this.context?.dispose().catch(() => undefined);
    await this.model?.dispose().catch(() => undefined);
    await this.llama?.dispose().catch(() => undefined);
    this.slots = [];
    delete this.context;
    delete this.model;
    delete this.llama;
  }
}
