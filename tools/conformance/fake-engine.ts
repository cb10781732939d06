/**
 * A local HTTP(S) server that answers as the inference engines do, after their documented APIs:
 *  - OpenAI completions (`POST /v1/completions` with `suffix`, `GET /v1/models`), as vLLM 0.6+ and
 *    llama.cpp's llama-server serve it; SSE streaming with `data: [DONE]`, usage in the last chunk;
 *  - llama-server's `POST /infill` (`input_prefix`, `input_suffix`, SSE `{content, stop}`) and `GET /health`;
 *  - Ollama's `POST /api/generate` with `suffix` (NDJSON stream, `done: true` last) and `GET /api/tags`.
 * Faults are switched on per test: a held first token (released by the test), a hang, an HTTP status
 * with Retry-After, a reset mid-stream, an echo of the request's headers in an error body.
 */
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttps } from "node:https";
import type { AddressInfo } from "node:net";
import { EventEmitter } from "node:events";

export interface SeenRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
  authorization: string | undefined;
  /** performance.now() when it arrived and when its connection closed (the client went away or the answer ended). */
  at: number;
  closedAt?: number;
  /** The answer was written to its end. */
  finished: boolean;
}

export interface Fault {
  /** Hold completions until release() (a slow first token): headers are sent, no token. */
  hold?: boolean;
  /** Never answer completions at all (no headers). */
  hang?: boolean;
  /** Answer completions with this status (and Retry-After when set). */
  status?: number;
  retryAfter?: string;
  /** Write this many chunks, then destroy the connection. */
  resetAfterChunks?: number;
  /** Put the request's Authorization header into the error body (an engine that echoes headers). */
  echoHeaders?: boolean;
  /** /health answers 503 "Loading model". */
  loading?: boolean;
}

export class FakeEngine extends EventEmitter {
  readonly seen: SeenRequest[] = [];
  fault: Fault = {};
  models = ["qwen2.5-coder-1.5b"];
  /** The completion text, as a function of the prompt and suffix. */
  answer: (prefix: string, suffix: string | undefined) => string = () => " a + b;";
  /** Chunks the answer is streamed in. */
  chunks = 4;
  private releases: (() => void)[] = [];
  private server!: Server;
  url = "";

  constructor(private readonly tls?: { key: string | Buffer; cert: string | Buffer }) {
    super();
  }

  async start(host = "127.0.0.1"): Promise<this> {
    const handler = (req: IncomingMessage, res: ServerResponse): void => void this.handle(req, res);
    this.server = this.tls ? createHttps(this.tls, handler) : createHttp(handler);
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((r) => this.server.listen(0, host, r));
    const { port } = this.server.address() as AddressInfo;
    this.url = `${this.tls ? "https" : "http"}://${host === "127.0.0.1" ? "127.0.0.1" : host}:${port}`;
    return this;
  }

  /** Let held completions go on. */
  release(): void {
    for (const r of this.releases.splice(0)) r();
  }

  completions(): SeenRequest[] {
    return this.seen.filter((r) => r.method === "POST");
  }

  /** Resolves with the next request that arrives (matching `path`, when given). */
  next(path?: string): Promise<SeenRequest> {
    return new Promise((resolve) => {
      const on = (r: SeenRequest): void => {
        if (path !== undefined && r.path !== path) return;
        this.off("request", on);
        resolve(r);
      };
      this.on("request", on);
    });
  }

  /** Resolves when `r`'s connection has closed. */
  closed(r: SeenRequest): Promise<SeenRequest> {
    if (r.closedAt !== undefined) return Promise.resolve(r);
    return new Promise((resolve) => {
      const on = (x: SeenRequest): void => {
        if (x !== r) return;
        this.off("close", on);
        resolve(x);
      };
      this.on("close", on);
    });
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = "";
    for await (const c of req) raw += String(c);
    const url = new URL(req.url ?? "/", "http://x");
    let body: Record<string, unknown> = {};
    try {
      body = raw === "" ? {} : (JSON.parse(raw) as Record<string, unknown>);
    } catch {
      return this.json(res, 400, { error: { message: "invalid JSON", type: "invalid_request_error" } });
    }
    const seen: SeenRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      body,
      authorization: req.headers.authorization,
      at: performance.now(),
      finished: false,
    };
    this.seen.push(seen);
    res.on("close", () => {
      seen.closedAt = performance.now();
      this.emit("close", seen);
    });
    this.emit("request", seen);
    const route = `${seen.method} ${seen.path}`;
    switch (route) {
      case "GET /v1/models":
        return this.json(res, 200, {
          object: "list",
          data: this.models.map((id) => ({ id, object: "model", owned_by: "vllm" })),
        });
      case "GET /api/tags":
        return this.json(res, 200, { models: this.models.map((name) => ({ name, model: name })) });
      case "GET /health":
        return this.fault.loading
          ? this.json(res, 503, { error: { code: 503, message: "Loading model", type: "unavailable_error" } })
          : this.json(res, 200, { status: "ok" });
      case "POST /v1/completions":
      case "POST /infill":
      case "POST /api/generate":
        return this.generate(route, seen, res);
      default:
        return this.json(res, 404, { error: { message: `no route ${route}` } });
    }
  }

  private json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  }

  private async generate(route: string, seen: SeenRequest, res: ServerResponse): Promise<void> {
    const b = seen.body;
    const f = this.fault;
    if (f.hang) return; // no headers, ever
    if (f.status !== undefined) {
      const message = f.echoHeaders ? `bad request with authorization: ${seen.authorization}` : "server busy";
      return this.json(
        res,
        f.status,
        route === "POST /api/generate" ? { error: message } : { error: { message, code: f.status } },
        f.retryAfter !== undefined ? { "retry-after": f.retryAfter } : {},
      );
    }
    if (route !== "POST /infill" && !this.models.includes(String(b.model))) {
      return route === "POST /api/generate"
        ? this.json(res, 404, { error: `model "${String(b.model)}" not found, try pulling it first` })
        : this.json(res, 404, {
            object: "error",
            message: `The model \`${String(b.model)}\` does not exist.`,
            type: "NotFoundError",
            code: 404,
          });
    }
    const prefix = String(route === "POST /infill" ? b.input_prefix : b.prompt);
    const suffixRaw = route === "POST /infill" ? b.input_suffix : b.suffix;
    const suffix = typeof suffixRaw === "string" ? suffixRaw : undefined;
    const text = this.answer(prefix, suffix);
    const promptTokens = (prefix + (suffix ?? "")).split(/\s+/).length;
    const completionTokens = text.split(/\s+/).filter(Boolean).length;
    const stream = b.stream === true;
    const parts: string[] = [];
    const size = Math.ceil(text.length / this.chunks) || 1;
    for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
    const ollama = route === "POST /api/generate";
    const infill = route === "POST /infill";
    const last = ollama
      ? { done: true, done_reason: "stop", prompt_eval_count: promptTokens, eval_count: completionTokens, response: "" }
      : infill
        ? {
            content: "",
            stop: true,
            stop_type: "eos",
            tokens_evaluated: promptTokens,
            tokens_predicted: completionTokens,
          }
        : null;
    if (!stream) {
      if (f.hold) await new Promise<void>((r) => this.releases.push(r));
      const whole = ollama
        ? { ...last, response: text }
        : infill
          ? { ...last, content: text }
          : {
              id: "cmpl-1",
              object: "text_completion",
              model: b.model,
              choices: [{ index: 0, text, finish_reason: "stop", logprobs: null }],
              usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens },
            };
      this.json(res, 200, whole);
      seen.finished = true;
      return;
    }
    res.writeHead(200, { "content-type": ollama ? "application/x-ndjson" : "text/event-stream" });
    res.flushHeaders();
    if (f.hold) await new Promise<void>((r) => this.releases.push(r));
    const frame = (o: unknown): string => (ollama ? `${JSON.stringify(o)}\n` : `data: ${JSON.stringify(o)}\n\n`);
    for (const [i, p] of parts.entries()) {
      if (f.resetAfterChunks !== undefined && i >= f.resetAfterChunks) {
        res.socket?.destroy();
        return;
      }
      res.write(
        frame(
          ollama
            ? { response: p, done: false }
            : infill
              ? { content: p, stop: false }
              : { choices: [{ index: 0, text: p, finish_reason: null }] },
        ),
      );
    }
    if (last) res.write(frame(last));
    else {
      res.write(frame({ choices: [{ index: 0, text: "", finish_reason: "stop" }] }));
      res.write(frame({ choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens } }));
      res.write("data: [DONE]\n\n");
    }
    seen.finished = true;
    res.end();
  }
}
