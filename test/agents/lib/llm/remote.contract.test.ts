/**
 * Contract tests of the inference-server client against a local server that answers as the engines'
 * documented APIs do (fake-engine.ts): OpenAI completions as vLLM and llama-server serve them,
 * llama-server's /infill and /health, Ollama's /api/generate; streamed and not; and their faults.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Token } from "node-llama-cpp";
import { modelConfig } from "../../../../agents/lib/llm/config.js";
import { DeadlineAbort } from "../../../../agents/lib/llm/engine.js";
import { EngineClient, EngineError, retryAfterMs } from "../../../../agents/lib/llm/remote/client.js";
import { remoteConfig, type FimDialect } from "../../../../agents/lib/llm/remote/config.js";
import { RemoteHost } from "../../../../agents/lib/llm/remote/host.js";
import { tempDir } from "../../../helpers.js";
import { FakeEngine, type SeenRequest } from "../../../../tools/conformance/fake-engine.js";

const MODEL = "qwen2.5-coder-1.5b";
const KEY = "sk-test-5f2c9a1e7b3d4c6a8e0f";

let dir: string;
let keyFile: string;
let cleanup: () => void;
const open: { stop(): Promise<void> }[] = [];
const hosts: RemoteHost[] = [];

beforeAll(() => {
  const t = tempDir("aipremote-");
  dir = t.dir;
  cleanup = t.cleanup;
  keyFile = join(dir, "key");
  writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
  return () => cleanup();
});

afterEach(async () => {
  for (const h of hosts.splice(0)) await h.dispose();
  for (const s of open.splice(0)) await s.stop();
});

async function engine(tls?: { key: string; cert: string }): Promise<FakeEngine> {
  const e = await new FakeEngine(tls).start();
  open.push(e);
  return e;
}

function host(url: string, env: Record<string, string> = {}): RemoteHost {
  const e = { AIP_MODEL_URL: url, AIP_MODEL_NAME: MODEL, AIP_MODEL_KEY_FILE: keyFile, ...env };
  const h = new RemoteHost(modelConfig({}, e), remoteConfig(e)!);
  hosts.push(h);
  return h;
}

const opts = (signal = AbortSignal.timeout(10_000)) => ({
  maxTokens: 16,
  temperature: 0,
  seed: 0,
  stop: ["\n\n"],
  signal,
});

function fim(h: RemoteHost, prefix: string, suffix: string): Token[] {
  return h.fimPrompt(h.tokenize(prefix), h.tokenize(suffix));
}

const PREFIX = "function add(a: number, b: number) {\n  return";
const SUFFIX = "\n}\n";

describe("the engines' completion APIs, streamed and not", () => {
  const cases: { fim: FimDialect; path: string; sent: (b: Record<string, unknown>) => void }[] = [
    {
      fim: "openai-suffix",
      path: "/v1/completions",
      sent: (b) =>
        expect(b).toMatchObject({ model: MODEL, prompt: PREFIX, suffix: SUFFIX, max_tokens: 16, stop: ["\n\n"] }),
    },
    {
      fim: "llama-infill",
      path: "/infill",
      sent: (b) =>
        expect(b).toMatchObject({ input_prefix: PREFIX, input_suffix: SUFFIX, n_predict: 16, cache_prompt: true }),
    },
    {
      fim: "ollama",
      path: "/api/generate",
      sent: (b) =>
        expect(b).toMatchObject({
          model: MODEL,
          prompt: PREFIX,
          suffix: SUFFIX,
          options: { num_predict: 16, temperature: 0 },
        }),
    },
  ];
  for (const c of cases)
    for (const stream of [true, false])
      it(`${c.fim} (${c.path}, ${stream ? "streamed" : "one answer"}): the FIM request, the text, the engine's token counts`, async () => {
        const e = await engine();
        e.answer = () => " a + b; // sum";
        const h = host(e.url, { AIP_MODEL_FIM: c.fim, AIP_MODEL_STREAM: stream ? "1" : "0" });
        await h.load();
        const gen = await h.generate(fim(h, PREFIX, SUFFIX), opts());
        expect(gen.text).toBe(" a + b; // sum");
        expect(gen.tokens).toBe(5); // the fake engine counts words
        expect(gen.promptTokens).toBe((PREFIX + SUFFIX).split(/\s+/).length);
        const req = e.completions()[0]!;
        expect(req.path).toBe(c.path);
        expect(req.body.stream).toBe(stream);
        c.sent(req.body);
        expect(req.authorization).toBe(`Bearer ${KEY}`);
        expect(h.engineHealth()).toMatchObject({ reachable: true, requests: 1, completion_tokens: 5 });
      });

  it("template: one prompt with the family's FIM tokens to /v1/completions, no suffix field", async () => {
    const e = await engine();
    const h = host(e.url, { AIP_MODEL_FIM: "template", AIP_MODEL_FIM_TEMPLATE: "qwen" });
    await h.generate(fim(h, PREFIX, SUFFIX), opts());
    const b = e.completions()[0]!.body;
    expect(b.prompt).toBe(`<|fim_prefix|>${PREFIX}<|fim_suffix|>${SUFFIX}<|fim_middle|>`);
    expect(b).not.toHaveProperty("suffix");
    expect(h.fim.tokens?.middle.text).toBe("<|fim_middle|>");
  });

  it("a plain prompt (summarize, testgen): no suffix; Ollama gets raw", async () => {
    const e = await engine();
    const h = host(e.url, { AIP_MODEL_FIM: "ollama" });
    await h.generate(h.tokenize("// Summary:"), opts());
    expect(e.completions()[0]!.body).toMatchObject({ prompt: "// Summary:", raw: true });
    expect(e.completions()[0]!.body).not.toHaveProperty("suffix");
  });

  it("text round-trips through the prompt tokens (unicode, special-token text) and the pool keeps one connection alive", async () => {
    const e = await engine();
    const h = host(e.url, { AIP_MODEL_CONNECTIONS: "1" });
    const prefix = 'const s = "wörld ✓ <|fim_prefix|>";\n';
    await h.generate(fim(h, prefix, "\t}"), opts());
    await h.generate(fim(h, prefix, "\t}"), opts());
    expect(e.completions().map((r) => [r.body.prompt, r.body.suffix])).toEqual([
      [prefix, "\t}"],
      [prefix, "\t}"],
    ]);
  });
});

describe("faults", () => {
  it("slow first token: the answer comes when the engine sends it, within the deadline", async () => {
    const e = await engine();
    e.fault = { hold: true };
    const h = host(e.url);
    const arrived = e.next("/v1/completions");
    const gen = h.generate(fim(h, PREFIX, SUFFIX), opts());
    await arrived;
    e.release();
    expect((await gen).text).toBe(" a + b;");
  });

  it("a hung engine: the stage's deadline aborts the request, the engine sees it closed, it counts as a failure", async () => {
    const e = await engine();
    e.fault = { hang: true };
    const h = host(e.url);
    const deadline = new AbortController();
    const arrived = e.next("/v1/completions");
    const gen = h.generate(fim(h, PREFIX, SUFFIX), opts(deadline.signal));
    const req = await arrived;
    deadline.abort(new DeadlineAbort("stage deadline"));
    await expect(gen).rejects.toBeInstanceOf(DeadlineAbort);
    await e.closed(req);
    expect(h.engineHealth()).toMatchObject({ errors: { timeout: 1 }, cancelled: 0 });
  });

  it("cancellation: the abort closes the upstream connection mid-stream, long before its request cap (how fast: the remote-engine bench); not counted as an engine failure", async () => {
    const e = await engine();
    e.fault = { hold: true };
    const h = host(e.url);
    const cancel = new AbortController();
    const arrived = e.next("/v1/completions");
    const gen = h.generate(fim(h, PREFIX, SUFFIX), opts(cancel.signal));
    const req: SeenRequest = await arrived;
    const abortedAt = performance.now();
    cancel.abort(new Error("superseded"));
    await expect(gen).rejects.toThrow("superseded");
    await e.closed(req);
    expect(req.finished).toBe(false);
    // The engine holds the request for good: only the abort, not the request's own cap, can have closed it.
    const cap = remoteConfig({ AIP_MODEL_URL: e.url, AIP_MODEL_NAME: MODEL })!.timeoutMs;
    expect(req.closedAt! - abortedAt).toBeLessThan(cap / 2);
    expect(h.engineHealth()).toMatchObject({ cancelled: 1, errors: {} });
    expect(h.circuit.failures).toBe(0);
  });

  for (const status of [429, 503])
    it(`${status} with Retry-After: the circuit opens at once for that long; keystrokes are not sent; a probe closes it`, async () => {
      const e = await engine();
      e.fault = { status, retryAfter: "1" };
      const h = host(e.url);
      const err = (await h.generate(fim(h, PREFIX, SUFFIX), opts()).catch((x: unknown) => x)) as EngineError;
      expect(err).toBeInstanceOf(EngineError);
      expect(err).toMatchObject({ kind: status === 429 ? "rate_limited" : "unavailable", status, retryAfterMs: 1000 });
      expect(err.message).toMatch(new RegExp(`answered HTTP ${status} \\(Retry-After 1 s\\)`));
      expect(h.unavailable()).toContain(`HTTP ${status}`);
      await expect(h.generate(fim(h, PREFIX, SUFFIX), opts())).rejects.toMatchObject({ kind: "unavailable" });
      expect(e.completions()).toHaveLength(1);
      e.fault = {};
      const probe = e.next("/v1/models");
      await probe;
      await new Promise<void>((r) => setImmediate(r));
      await expect.poll(() => h.circuit.state).toBe("closed");
      expect(e.completions()).toHaveLength(1); // the probe sent no prompt
      expect((await h.generate(fim(h, PREFIX, SUFFIX), opts())).text).toBe(" a + b;");
    });

  it("Retry-After as an HTTP date, and capped", () => {
    const now = Date.parse("2026-12-04T21:00:00Z");
    expect(retryAfterMs("Fri, 04 Dec 2026 21:00:05 GMT", now)).toBe(5000);
    expect(retryAfterMs("86400", now)).toBe(60_000);
    expect(retryAfterMs("soon", now)).toBeUndefined();
  });

  for (const fimDialect of ["openai-suffix", "ollama", "llama-infill"] as const)
    it(`${fimDialect}: a connection reset mid-stream is an engine failure ("reset"), not a truncated answer`, async () => {
      const e = await engine();
      e.fault = { resetAfterChunks: 2 };
      const h = host(e.url, { AIP_MODEL_FIM: fimDialect });
      const err = await h.generate(fim(h, PREFIX, SUFFIX), opts()).catch((x: unknown) => x);
      expect(err).toMatchObject({ kind: "reset" });
      expect(h.engineHealth()).toMatchObject({ reachable: false, errors: { reset: 1 } });
    });

  it("a wrong model name: the probe names what the engine serves; a request is model_not_found (vLLM's 404, Ollama's)", async () => {
    const e = await engine();
    e.models = ["codellama-7b"];
    const h = host(e.url);
    await h.load();
    expect(h.unavailable()).toBe(`${e.url} does not serve the model "${MODEL}"; it serves "codellama-7b"`);
    expect(h.engineHealth()).toMatchObject({ reachable: true, last_error: { kind: "model_not_found" } });
    const client = new EngineClient(
      remoteConfig({ AIP_MODEL_URL: e.url, AIP_MODEL_NAME: MODEL, AIP_MODEL_FIM: "ollama" })!,
    );
    const err = await client
      .complete({
        prefix: "x",
        suffix: "y",
        maxTokens: 1,
        temperature: 0,
        seed: 0,
        stop: [],
        signal: AbortSignal.timeout(5000),
      })
      .catch((x: unknown) => x);
    await client.close();
    expect(err).toMatchObject({ kind: "model_not_found", status: 404 });
    expect((err as Error).message).toContain(`model "${MODEL}" not found`);
  });

  it("llama-server loading (/health 503): the circuit stays open until /health answers ok", async () => {
    const e = await engine();
    e.fault = { loading: true };
    const h = host(e.url, { AIP_MODEL_FIM: "llama-infill", AIP_MODEL_REPROBE_MS: "20" });
    await h.load();
    expect(h.unavailable()).toContain("Loading model");
    e.fault = {};
    await e.next("/health");
    await expect.poll(() => h.circuit.state).toBe("closed");
  });

  it("an engine that is down: the circuit opens after AIP_MODEL_CIRCUIT_FAILURES failures, then only probes reach the address", async () => {
    const e = await engine();
    const url = e.url;
    await e.stop();
    open.pop();
    const h = host(url, { AIP_MODEL_CIRCUIT_FAILURES: "2", AIP_MODEL_REPROBE_MS: "600000" });
    for (let i = 0; i < 2; i++)
      await expect(h.generate(fim(h, PREFIX, SUFFIX), opts())).rejects.toMatchObject({ kind: "connect" });
    expect(h.circuit.state).toBe("open");
    await expect(h.generate(fim(h, PREFIX, SUFFIX), opts())).rejects.toMatchObject({ kind: "unavailable" });
    expect(h.engineHealth()).toMatchObject({ reachable: false, requests: 2, errors: { connect: 2 } });
  });
});

describe("TLS", () => {
  let certs: { ok: { key: string; cert: string }; other: { key: string; cert: string }; okCert: string };
  beforeAll(() => {
    const make = (name: string, san: string): { key: string; cert: string } => {
      const key = join(dir, `${name}.key`);
      const cert = join(dir, `${name}.pem`);
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:prime256v1",
          "-nodes",
          "-keyout",
          key,
          "-out",
          cert,
          "-days",
          "1",
          "-subj",
          `/CN=${name}`,
          "-addext",
          `subjectAltName=${san}`,
        ],
        { stdio: "ignore" },
      );
      return { key, cert };
    };
    const ok = make("engine", "IP:127.0.0.1");
    const other = make("other", "DNS:other.example");
    certs = {
      ok: { key: readFileSync(ok.key, "utf8"), cert: readFileSync(ok.cert, "utf8") },
      other: { key: readFileSync(other.key, "utf8"), cert: readFileSync(other.cert, "utf8") },
      okCert: ok.cert,
    };
    writeFileSync(join(dir, "other-ca.pem"), certs.other.cert);
  });

  it("https with the engine's CA (AIP_MODEL_CA_FILE) works", async () => {
    const e = await engine(certs.ok);
    const h = host(e.url, { AIP_MODEL_CA_FILE: certs.okCert });
    expect((await h.generate(fim(h, PREFIX, SUFFIX), opts())).text).toBe(" a + b;");
  });

  it("a certificate that does not match the address is refused (kind tls), nothing is sent", async () => {
    const e = await engine(certs.other);
    const h = host(e.url, { AIP_MODEL_CA_FILE: join(dir, "other-ca.pem") });
    const err = (await h.generate(fim(h, PREFIX, SUFFIX), opts()).catch((x: unknown) => x)) as EngineError;
    expect(err.kind).toBe("tls");
    expect(err.message).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID|IP: 127\.0\.0\.1 is not in the cert's list/);
    expect(e.seen).toHaveLength(0);
  });

  it("a certificate from an unknown CA is refused", async () => {
    const e = await engine(certs.ok);
    const h = host(e.url);
    await expect(h.generate(fim(h, PREFIX, SUFFIX), opts())).rejects.toMatchObject({ kind: "tls" });
    expect(e.seen).toHaveLength(0);
  });
});

describe("the key", () => {
  it("is sent as a bearer token and never appears in errors, /healthz, the config's JSON or the log", async () => {
    const e = await engine();
    e.fault = { status: 400, echoHeaders: true };
    const lines: string[] = [];
    const log = Object.fromEntries(
      ["debug", "info", "warn", "error"].map((l) => [l, (o: unknown, m: string) => lines.push(JSON.stringify(o) + m)]),
    ) as unknown as Parameters<RemoteHost["load"]>[0];
    const h = host(e.url);
    await h.load(log);
    const err = (await h.generate(fim(h, PREFIX, SUFFIX), opts()).catch((x: unknown) => x)) as EngineError;
    expect(e.completions()[0]!.authorization).toBe(`Bearer ${KEY}`);
    expect(err.message).toContain("authorization: Bearer [redacted]");
    const everything = [err.message, JSON.stringify(h.health()), JSON.stringify(h.remote), ...lines].join("\n");
    expect(everything).toContain("[redacted]");
    expect(everything).not.toContain(KEY);
    expect(h.engineHealth()).toMatchObject({ key_file: keyFile });
  });

  it("comes from a file only: credentials in the URL are refused; a bad key file is named, its content never", () => {
    expect(() => remoteConfig({ AIP_MODEL_URL: `http://u:${KEY}@127.0.0.1:1`, AIP_MODEL_NAME: "m" })).toThrow(
      /must not carry credentials/,
    );
    const bad = join(dir, "bad-key");
    writeFileSync(bad, `${KEY}\nsecond line\n`);
    let message = "";
    try {
      remoteConfig({ AIP_MODEL_URL: "http://127.0.0.1:1", AIP_MODEL_NAME: "m", AIP_MODEL_KEY_FILE: bad });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(`AIP_MODEL_KEY_FILE ${bad} must hold one line, the key (at most 4096 bytes)`);
    expect(() =>
      remoteConfig({ AIP_MODEL_URL: "http://127.0.0.1:1", AIP_MODEL_NAME: "m", AIP_MODEL: "/x.gguf" }),
    ).toThrow(/not both/);
    expect(() =>
      remoteConfig({ AIP_MODEL_URL: "http://127.0.0.1:1", AIP_MODEL_NAME: "m", AIP_MODEL_FIM: "template" }),
    ).toThrow(/AIP_MODEL_FIM_TEMPLATE/);
  });
});
