/**
 * The inference-server client: one undici pool of keep-alive HTTP/1.1 connections (TLS for https)
 * per engine, a request per generation in the configured dialect, streamed where the engine streams.
 * Aborting the request's signal destroys its connection at once, which is how llama.cpp, vLLM and
 * Ollama learn to stop generating (they cancel the sequence when the client goes away).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type * as Undici from "undici";
import type { Dispatcher, Pool } from "undici";
import { redact, type RemoteConfig } from "./config.js";

let loaded: typeof Undici | undefined;
/**
 * undici, loaded by the first client: most agent processes (no inference server configured, every
 * one-shot answer) never use it, and its modules are a large share of what an agent loads at start.
 */
function undici(): typeof Undici {
  loaded ??= createRequire(import.meta.url)("undici") as typeof Undici;
  return loaded;
}

/** An answer larger than this is not a completion: the request is aborted. */
export const MAX_ANSWER_BYTES = 1024 * 1024;
/** An error body is read up to this many bytes (its message goes into the error, redacted). */
const MAX_ERROR_BODY_BYTES = 4096;
/** A Retry-After longer than this is capped: the circuit re-probes by then anyway. */
export const MAX_RETRY_AFTER_MS = 60_000;
/** How long a connection may take to open (the request's own deadline wins when shorter). */
const CONNECT_TIMEOUT_MS = 5000;

export type EngineErrorKind =
  | "connect"
  | "tls"
  | "timeout"
  | "rate_limited"
  | "unavailable"
  | "model_not_found"
  | "http"
  | "reset"
  | "protocol"
  | "too_large";

/** A failed upstream request: what went wrong, in words a person can act on (never the key). */
export class EngineError extends Error {
  constructor(
    readonly kind: EngineErrorKind,
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export interface EngineRequest {
  /** The text before the cursor, or the whole prompt when `suffix` is undefined. */
  prefix: string;
  /** The text after the cursor (a fill-in-the-middle request); undefined for a plain prompt. */
  suffix?: string;
  maxTokens: number;
  temperature: number;
  seed: number;
  stop: string[];
  signal: AbortSignal;
}

export interface EngineAnswer {
  text: string;
  /** As the engine counted them; undefined when it did not say. */
  promptTokens?: number;
  completionTokens?: number;
  stopReason: string;
  ms: number;
  /** Time to the first byte of the answer's body. */
  firstByteMs: number;
}

interface Chunk {
  text: string;
  done?: boolean;
  stopReason?: string;
  promptTokens?: number;
  completionTokens?: number;
}

type Json = Record<string, unknown>;

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** One parsed object of an OpenAI completions answer (a whole answer or a streamed chunk). */
function openaiChunk(o: Json): Chunk {
  const choice = (Array.isArray(o.choices) ? (o.choices[0] as Json | undefined) : undefined) ?? {};
  const usage = (o.usage ?? {}) as Json;
  const finish = choice.finish_reason;
  return {
    text: typeof choice.text === "string" ? choice.text : "",
    ...(typeof finish === "string" ? { stopReason: finish } : {}),
    ...(num(usage.prompt_tokens) !== undefined ? { promptTokens: num(usage.prompt_tokens)! } : {}),
    ...(num(usage.completion_tokens) !== undefined ? { completionTokens: num(usage.completion_tokens)! } : {}),
  };
}

/** llama-server's /infill (and /completion) answer. */
function infillChunk(o: Json): Chunk {
  const done = o.stop === true;
  return {
    text: typeof o.content === "string" ? o.content : "",
    done,
    ...(done ? { stopReason: typeof o.stop_type === "string" ? o.stop_type : "stop" } : {}),
    ...(num(o.tokens_evaluated) !== undefined ? { promptTokens: num(o.tokens_evaluated)! } : {}),
    ...(num(o.tokens_predicted) !== undefined ? { completionTokens: num(o.tokens_predicted)! } : {}),
  };
}

/** Ollama's /api/generate answer. */
function ollamaChunk(o: Json): Chunk {
  const done = o.done === true;
  return {
    text: typeof o.response === "string" ? o.response : "",
    done,
    ...(done ? { stopReason: typeof o.done_reason === "string" ? o.done_reason : "stop" } : {}),
    ...(num(o.prompt_eval_count) !== undefined ? { promptTokens: num(o.prompt_eval_count)! } : {}),
    ...(num(o.eval_count) !== undefined ? { completionTokens: num(o.eval_count)! } : {}),
  };
}

interface Built {
  path: string;
  body: Json;
  /** How a streamed answer is framed. */
  framing: "sse" | "ndjson";
  parse: (o: Json) => Chunk;
}

/** The dialect's request for `req`. */
function build(config: RemoteConfig, req: EngineRequest): Built {
  const fill = req.suffix !== undefined;
  const sampling = { temperature: req.temperature, seed: req.seed };
  if (config.fim === "ollama")
    return {
      path: "/api/generate",
      body: {
        model: config.model,
        prompt: req.prefix,
        ...(fill ? { suffix: req.suffix } : { raw: true }),
        stream: config.stream,
        options: { num_predict: req.maxTokens, stop: req.stop, ...sampling },
      },
      framing: "ndjson",
      parse: ollamaChunk,
    };
  if (config.fim === "llama-infill" && fill)
    return {
      path: "/infill",
      body: {
        input_prefix: req.prefix,
        input_suffix: req.suffix,
        n_predict: req.maxTokens,
        stop: req.stop,
        stream: config.stream,
        cache_prompt: true,
        ...sampling,
      },
      framing: "sse",
      parse: infillChunk,
    };
  const template = config.fim === "template" && fill ? config.template! : undefined;
  const prompt =
    template !== undefined
      ? template.replace("{prefix}", () => req.prefix).replace("{suffix}", () => req.suffix!)
      : req.prefix;
  return {
    path: "/v1/completions",
    body: {
      model: config.model,
      prompt,
      ...(fill && template === undefined ? { suffix: req.suffix } : {}),
      max_tokens: req.maxTokens,
      stop: req.stop,
      stream: config.stream,
      ...(config.stream ? { stream_options: { include_usage: true } } : {}),
      ...sampling,
    },
    framing: "sse",
    parse: openaiChunk,
  };
}

/** Retry-After (seconds or an HTTP date) in ms, capped at MAX_RETRY_AFTER_MS; undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === "") return undefined;
  const secs = Number(v);
  const ms = Number.isFinite(secs) ? secs * 1000 : Date.parse(v) - now;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Math.round(ms)));
}

/** The message of an engine's error body (OpenAI `{error: {message}}`, Ollama `{error: "…"}`, or text). */
function errorMessage(body: string): string {
  try {
    const o = JSON.parse(body) as Json;
    const e = o.error;
    if (typeof e === "string") return e;
    if (e && typeof e === "object" && typeof (e as Json).message === "string") return (e as Json).message as string;
    if (typeof o.message === "string") return o.message;
  } catch {
    // not JSON: the text itself
  }
  return body.replace(/\s+/g, " ").trim().slice(0, 300);
}

const TLS_CODES =
  /^(ERR_TLS_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(VERIFY|GET)_|ERR_SSL_|HOSTNAME_MISMATCH)/;

/** An undici or socket error as an EngineError. */
function classify(err: unknown, base: string): EngineError {
  if (err instanceof EngineError) return err;
  const undiciErrors = undici().errors;
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = e.code ?? e.cause?.code ?? "";
  const message = e.cause?.message ?? e.message;
  if (TLS_CODES.test(code) || TLS_CODES.test(e.cause?.code ?? ""))
    return new EngineError("tls", `TLS to ${base} failed: ${message} (${code})`);
  if (err instanceof undiciErrors.ConnectTimeoutError)
    return new EngineError("timeout", `Connecting to ${base} timed out`);
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError)
    return new EngineError("timeout", `${base} did not answer in time: ${e.message}`);
  if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EHOSTUNREACH" || code === "EAI_AGAIN")
    return new EngineError("connect", `Cannot connect to ${base}: ${code}`);
  if (err instanceof undiciErrors.SocketError || code === "ECONNRESET" || code === "EPIPE" || code === "UND_ERR_SOCKET")
    return new EngineError("reset", `${base} closed the connection mid-answer: ${message}`);
  return new EngineError("protocol", `Request to ${base} failed: ${message}`);
}

export class EngineClient {
  private readonly pool: Pool;
  /** The URL path prefix (a base URL like https://gw/llm has "/llm"). */
  private readonly prefix: string;
  /** The engine's address for messages: scheme, host and port. */
  readonly origin: string;
  private readonly headers: Record<string, string>;

  constructor(readonly config: RemoteConfig) {
    const u = new URL(config.url);
    this.origin = u.origin;
    this.prefix = u.pathname.replace(/\/+$/, "");
    const key = config.key();
    this.headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream, application/x-ndjson",
      ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}),
    };
    this.pool = new (undici().Pool)(u.origin, {
      connections: config.connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: config.timeoutMs,
      bodyTimeout: config.timeoutMs,
      connect: {
        timeout: Math.min(CONNECT_TIMEOUT_MS, config.timeoutMs),
        rejectUnauthorized: true,
        ...(config.caFile !== undefined ? { ca: readFileSync(config.caFile) } : {}),
      },
    });
  }

  private redact(text: string): string {
    return redact(text, this.config.key());
  }

  private async send(
    method: "GET" | "POST",
    path: string,
    body: Json | undefined,
    signal: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    try {
      const res = await this.pool.request({
        method,
        path: this.prefix + path,
        headers: this.headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal,
      });
      if (res.statusCode >= 200 && res.statusCode < 300) return res;
      throw await this.httpError(res, path);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      const e = classify(err, this.origin);
      throw new EngineError(e.kind, this.redact(e.message), e.status, e.retryAfterMs);
    }
  }

  private async httpError(res: Dispatcher.ResponseData, path: string): Promise<EngineError> {
    let text = "";
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        text += chunk.toString("utf8");
        if (text.length >= MAX_ERROR_BODY_BYTES) break;
      }
    } catch {
      // the body is only for the message
    }
    res.body.destroy();
    const status = res.statusCode;
    const message = this.redact(errorMessage(text.slice(0, MAX_ERROR_BODY_BYTES)));
    const where = `${this.origin}${this.prefix}${path}`;
    if (status === 429 || status === 503) {
      const after = retryAfterMs(res.headers["retry-after"]);
      return new EngineError(
        status === 429 ? "rate_limited" : "unavailable",
        `${where} answered HTTP ${status}${after !== undefined ? ` (Retry-After ${Math.round(after / 1000)} s)` : ""}: ${message}`,
        status,
        after,
      );
    }
    if ((status === 404 || status === 400) && /model/i.test(message))
      return new EngineError(
        "model_not_found",
        `${where} does not serve the model ${JSON.stringify(this.config.model)}: ${message}`,
        status,
      );
    return new EngineError("http", `${where} answered HTTP ${status}: ${message}`, status);
  }

  /** One generation. Throws `signal.reason` when the signal fires, an EngineError when the engine fails. */
  async complete(req: EngineRequest): Promise<EngineAnswer> {
    const started = performance.now();
    const built = build(this.config, req);
    const res = await this.send("POST", built.path, built.body, req.signal);
    let firstByteMs = -1;
    let text = "";
    let bytes = 0;
    const out: Chunk = { text: "" };
    const take = (c: Chunk): void => {
      text += c.text;
      if (c.stopReason !== undefined) out.stopReason = c.stopReason;
      if (c.promptTokens !== undefined) out.promptTokens = c.promptTokens;
      if (c.completionTokens !== undefined) out.completionTokens = c.completionTokens;
      if (c.done) out.done = true;
    };
    try {
      const decoder = new TextDecoder();
      let pending = "";
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (firstByteMs < 0) firstByteMs = performance.now() - started;
        bytes += chunk.length;
        if (bytes > MAX_ANSWER_BYTES)
          throw new EngineError("too_large", `${this.origin} answered more than ${MAX_ANSWER_BYTES} bytes`);
        pending += decoder.decode(chunk, { stream: true });
        if (!this.config.stream) continue;
        let nl: number;
        while ((nl = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, nl).trim();
          pending = pending.slice(nl + 1);
          const data = built.framing === "sse" ? (line.startsWith("data:") ? line.slice(5).trim() : "") : line;
          if (data === "") continue;
          if (data === "[DONE]") {
            out.done = true;
            break;
          }
          take(built.parse(this.json(data)));
        }
        if (out.done) break;
      }
      if (!this.config.stream) take(built.parse(this.json(pending)));
      else if (!out.done && built.framing === "ndjson")
        throw new EngineError("reset", `${this.origin} ended the stream before its last chunk`);
    } catch (err) {
      if (req.signal.aborted) throw req.signal.reason;
      const e = classify(err, this.origin);
      throw new EngineError(e.kind, this.redact(e.message), e.status, e.retryAfterMs);
    } finally {
      // Early end (DONE, stop, error or abort): the rest of the body is not read, the connection is not reused.
      if (!res.body.readableEnded) res.body.destroy();
    }
    return {
      text,
      ...(out.promptTokens !== undefined ? { promptTokens: out.promptTokens } : {}),
      ...(out.completionTokens !== undefined ? { completionTokens: out.completionTokens } : {}),
      stopReason: out.stopReason ?? "stop",
      ms: performance.now() - started,
      firstByteMs: Math.max(0, firstByteMs),
    };
  }

  private json(text: string): Json {
    try {
      const o = JSON.parse(text) as unknown;
      if (o && typeof o === "object" && !Array.isArray(o)) return o as Json;
    } catch {
      // reported below
    }
    throw new EngineError("protocol", `${this.origin} answered something that is not a JSON object`);
  }

  private async getJson(path: string, signal: AbortSignal): Promise<Json> {
    const res = await this.send("GET", path, undefined, signal);
    const text = await res.body.text();
    return this.json(text);
  }

  /**
   * Is the engine up and serving the configured model? llama-server: GET /health; Ollama: GET
   * /api/tags; the others: GET /v1/models. Never sends a prompt. Throws an EngineError saying why not.
   */
  async probe(signal: AbortSignal): Promise<void> {
    const { model, fim } = this.config;
    if (fim === "llama-infill") {
      await this.getJson("/health", signal);
      return;
    }
    const names =
      fim === "ollama"
        ? (((await this.getJson("/api/tags", signal)).models ?? []) as Json[]).flatMap((m) => [m.name, m.model])
        : (((await this.getJson("/v1/models", signal)).data ?? []) as Json[]).map((m) => m.id);
    const served = names.filter((n): n is string => typeof n === "string");
    const matches = (n: string): boolean => n === model || n === `${model}:latest`;
    if (!served.some(matches))
      throw new EngineError(
        "model_not_found",
        `${this.origin} does not serve the model ${JSON.stringify(model)}; it serves ${served.length > 0 ? served.map((n) => JSON.stringify(n)).join(", ") : "none"}`,
      );
  }

  async close(): Promise<void> {
    await this.pool.destroy().catch(() => undefined);
  }
}
