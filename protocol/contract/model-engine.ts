/**
 * What the agents and the orchestrator agree on about a model on an inference server: the FIM
 * dialects the agency config may name, and the upstream latency buckets an agent reports in /healthz
 * and the orchestrator exposes in /metrics.
 */

/**
 * How a fill-in-the-middle request is put to the engine:
 *  - openai-suffix: POST /v1/completions with `prompt` and `suffix` (vLLM, llama-server, Ollama's OpenAI API);
 *  - llama-infill: POST /infill with `input_prefix` and `input_suffix` (llama-server);
 *  - ollama: POST /api/generate with `prompt` and `suffix` (Ollama's own API);
 *  - template: POST /v1/completions with one prompt built from the model family's FIM tokens.
 */
export const FIM_DIALECTS = ["openai-suffix", "llama-infill", "ollama", "template"] as const;
export type FimDialect = (typeof FIM_DIALECTS)[number];

/** Upstream latency buckets (seconds, upper bounds). */
export const UPSTREAM_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4] as const;
