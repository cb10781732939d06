/** Model configuration: `AIP_MODEL` and friends, with defaults chosen on the tiny model (docs/performance.md, "Model-backed completion figures"). */
import { availableParallelism } from "node:os";
import { envInt, envString } from "../../../protocol/util/env.js";

export interface ModelConfig {
  /** Path to a .gguf file; undefined → no model (degraded mode). */
  path?: string;
  /**
   * CPU threads for inference. On shared cores a second thread spins against the other processes on
   * the host and generation becomes far slower than with one. Default: half the cores, at most 4, so a
   * 2-core host gets 1.
   */
  threads: number;
  /** Tokens per sequence (each in-flight request gets its own sequence). */
  contextSize: number;
  /** Layers offloaded to a GPU; 0 = CPU only (the prebuilt binary here is CPU). */
  gpuLayers: number;
  /** Sequences = requests evaluated at once; more wait for a free one. */
  sequences: number;
  /**
   * Keystrokes agent-complete's warm-up types through its non-model stages (parser, tokenizers,
   * prettier) with a canned completion before it reports ready, so V8 has compiled their hot paths:
   * after a handful of keystrokes prettier is still far from its optimised speed.
   */
  warmupKeystrokes: number;
}

/** See ModelConfig.warmupKeystrokes: the registered default of AIP_WARMUP_KEYSTROKES. */
export const DEFAULT_WARMUP_KEYSTROKES = envInt("AIP_WARMUP_KEYSTROKES", {})!;

export function defaultThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.min(4, Math.floor(cores / 2)));
}

/** The model configuration from the environment (explicit options win). */
export function modelConfig(options: Partial<ModelConfig> = {}, env = process.env, defaultSequences = 4): ModelConfig {
  const path = options.path ?? envString("AIP_MODEL", env);
  return {
    ...(path !== undefined ? { path } : {}),
    threads: options.threads ?? envInt("AIP_MODEL_THREADS", env) ?? defaultThreads(),
    contextSize: options.contextSize ?? envInt("AIP_MODEL_CONTEXT", env)!,
    gpuLayers: options.gpuLayers ?? envInt("AIP_MODEL_GPU_LAYERS", env)!,
    sequences: options.sequences ?? envInt("AIP_MODEL_SEQUENCES", env) ?? defaultSequences,
    warmupKeystrokes: options.warmupKeystrokes ?? envInt("AIP_WARMUP_KEYSTROKES", env)!,
  };
}
