/**
 * A model on an inference server (llama.cpp's llama-server, vLLM, Ollama, anything speaking the
 * OpenAI completions API): `AIP_MODEL_URL` and friends (docs/operations.md "Models on an inference
 * server"). The API key is read from `AIP_MODEL_KEY_FILE` only, and is kept out of every object that
 * can be printed: `RemoteConfig` holds a function that returns it, never the string.
 */
import { readFileSync } from "node:fs";
import { FIM_DIALECTS, type FimDialect } from "../../../../protocol/contract/model-engine.js";
import { envFlag, envInt, envString } from "../../../../protocol/util/env.js";

export { FIM_DIALECTS, type FimDialect };

/** The FIM prompt of each model family: `{prefix}` and `{suffix}` stand for the text around the cursor. */
export const FIM_TEMPLATES: Record<string, string> = {
  qwen: "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>",
  codegemma: "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>",
  starcoder: "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>",
  codellama: "<PRE> {prefix} <SUF>{suffix} <MID>",
  deepseek: "<｜fim▁begin｜>{prefix}<｜fim▁hole｜>{suffix}<｜fim▁end｜>",
  codestral: "[SUFFIX]{suffix}[PREFIX]{prefix}",
};

export interface RemoteConfig {
  /** Base URL: scheme, host, port and an optional path prefix (no credentials, query or fragment). */
  url: string;
  /** The model name the engine serves (`model` in every request; checked against the engine's list). */
  model: string;
  fim: FimDialect;
  /** The template dialect's prompt (a family's from FIM_TEMPLATES, or a custom one with {prefix} and {suffix}). */
  template?: string;
  /** Cap on one upstream request (the stage deadline is usually shorter and wins). */
  timeoutMs: number;
  /** Tokens one request may hold (prompt + generated): the prompt is trimmed to it. */
  contextSize: number;
  /** Stream the answer (tokens as they come; a hung engine is told from a slow one by the first token). */
  stream: boolean;
  /** Connections kept alive to the engine (one request each at a time). */
  connections: number;
  /** Consecutive failures that open the circuit. */
  circuitFailures: number;
  /** First wait before re-probing an open circuit (doubles per failed probe, up to 30 s). */
  reprobeMs: number;
  /** PEM file of the CA that signed the engine's certificate (a private, in-cluster CA). */
  caFile?: string;
  /** The API key (sent as `Authorization: Bearer …`), or undefined; a function so that printing the config never prints it. */
  key: () => string | undefined;
  /** Where the key came from (the file's path), for /healthz. */
  keyFile?: string;
}

/** A key file larger than this is not a key. */
const MAX_KEY_BYTES = 4096;

/** The key in `path`: one line, trimmed; throws with the path (never the content) when it is not usable. */
export function readKeyFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`AIP_MODEL_KEY_FILE ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? "error"}`);
  }
  const key = text.trim();
  if (Buffer.byteLength(text) > MAX_KEY_BYTES || key.includes("\n") || key === "")
    throw new Error(`AIP_MODEL_KEY_FILE ${path} must hold one line, the key (at most ${MAX_KEY_BYTES} bytes)`);
  if (!/^[\x21-\x7e]+$/.test(key))
    throw new Error(`AIP_MODEL_KEY_FILE ${path} holds characters a header cannot carry (printable ASCII only)`);
  return key;
}

/** The remote model configuration from the environment, or undefined when `AIP_MODEL_URL` is not set. */
export function remoteConfig(env: NodeJS.ProcessEnv, defaultConnections = 4): RemoteConfig | undefined {
  const raw = envString("AIP_MODEL_URL", env);
  if (raw === undefined) return undefined;
  if (envString("AIP_MODEL", env) !== undefined)
    throw new Error("Set AIP_MODEL (a local .gguf file) or AIP_MODEL_URL (an inference server), not both");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`AIP_MODEL_URL must be an http:// or https:// URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new Error(`AIP_MODEL_URL must be an http:// or https:// URL, got ${JSON.stringify(url.protocol)}`);
  if (url.username !== "" || url.password !== "")
    throw new Error("AIP_MODEL_URL must not carry credentials: put the key in the file AIP_MODEL_KEY_FILE names");
  if (url.search !== "" || url.hash !== "") throw new Error("AIP_MODEL_URL must not have a query or a fragment");
  const model = envString("AIP_MODEL_NAME", env);
  if (model === undefined) throw new Error("AIP_MODEL_NAME must name the model the engine at AIP_MODEL_URL serves");
  const fim = (envString("AIP_MODEL_FIM", env) ?? "openai-suffix") as FimDialect;
  let template: string | undefined;
  if (fim === "template") {
    const t = envString("AIP_MODEL_FIM_TEMPLATE", env) ?? "";
    template = FIM_TEMPLATES[t] ?? t;
    if (!template.includes("{prefix}") || !template.includes("{suffix}"))
      throw new Error(
        `AIP_MODEL_FIM=template needs AIP_MODEL_FIM_TEMPLATE: a family (${Object.keys(FIM_TEMPLATES).join(", ")}) or a template with {prefix} and {suffix}`,
      );
  }
  const keyFile = envString("AIP_MODEL_KEY_FILE", env);
  const key = keyFile !== undefined ? readKeyFile(keyFile) : undefined;
  const caFile = envString("AIP_MODEL_CA_FILE", env);
  if (caFile !== undefined) readFileSync(caFile); // fail at start, not at the first request
  return {
    url: url.href.replace(/\/+$/, ""),
    model,
    fim,
    ...(template !== undefined ? { template } : {}),
    timeoutMs: envInt("AIP_MODEL_TIMEOUT_MS", env)!,
    contextSize: envInt("AIP_MODEL_CONTEXT", env)!,
    stream: envFlag("AIP_MODEL_STREAM", env, true),
    connections: envInt("AIP_MODEL_CONNECTIONS", env) ?? defaultConnections,
    circuitFailures: envInt("AIP_MODEL_CIRCUIT_FAILURES", env)!,
    reprobeMs: envInt("AIP_MODEL_REPROBE_MS", env)!,
    ...(caFile !== undefined ? { caFile } : {}),
    key: () => key,
    ...(keyFile !== undefined ? { keyFile } : {}),
  };
}

/** Every occurrence of the key in `text` replaced: an engine may echo the request's headers in an error. */
export function redact(text: string, key: string | undefined): string {
  return key === undefined || key === "" ? text : text.split(key).join("[redacted]");
}
