/** Model configuration: `AIP_MODEL` and friends, with defaults chosen on the tiny model (docs/performance.md, "Model-backed completion figures"). */
import { availableParallelism } from "node:os";

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

function intEnv(env: NodeJS.ProcessEnv, name: string, min: number, max: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

/** See ModelConfig.warmupKeystrokes (~0.5 s of start-up here). */
export const DEFAULT_WARMUP_KEYSTROKES = 200;

export function defaultThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.min(4, Math.floor(cores / 2)));
}

/** The model configuration from the environment (explicit options win). */
export function modelConfig(options: Partial<ModelConfig> = {}, env = process.env, defaultSequences = 4): ModelConfig {
  const path = options.path ?? (env.AIP_MODEL && env.AIP_MODEL !== "" ? env.AIP_MODEL : undefined);
  return {
    ...(path !== undefined ? { path } : {}),
    threads: options.threads ?? intEnv(env, "AIP_MODEL_THREADS", 1, 256) ?? defaultThreads(),
    contextSize: options.contextSize ?? intEnv(env, "AIP_MODEL_CONTEXT", 256, 131072) ?? 2048,
    gpuLayers: options.gpuLayers ?? intEnv(env, "AIP_MODEL_GPU_LAYERS", 0, 1000) ?? 0,
    sequences: options.sequences ?? intEnv(env, "AIP_MODEL_SEQUENCES", 1, 64) ?? defaultSequences,
    warmupKeystrokes:
      options.warmupKeystrokes ?? intEnv(env, "AIP_WARMUP_KEYSTROKES", 0, 100_000) ?? DEFAULT_WARMUP_KEYSTROKES,
  };
}
