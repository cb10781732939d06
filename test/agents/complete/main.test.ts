import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { httpRequest, invokeHttp as rawInvoke } from "../../../protocol/transport/client.js";
import { serve, type Served } from "../../../tools/conformance/process.js";
import { tempDir } from "../../helpers.js";
import { DEFAULT_WARMUP_KEYSTROKES } from "../../../agents/lib/llm/config.js";
import { COMPLETE, modelEnv } from "../lib/llm/tiny-model.js";
import { SHAPES, broken as brokenBuffer, expectDiagnostics } from "../broken-cases.js";
import { pythonRequest } from "./python-sample.js";

type Json = Record<string, any>;

async function invokeHttp(sock: string, body: unknown): Promise<{ status: number; json: Json }> {
  return (await rawInvoke(sock, body)) as { status: number; json: Json };
}

/** Serve agent-complete with `env` added to this process's environment (the child inherits it). */
export async function serveComplete(
  env: Record<string, string | undefined>,
): Promise<{ server: Served; sock: string; cleanup: () => Promise<void> }> {
  const t = tempDir();
  const sock = join(t.dir, "c.sock");
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    const server = await serve(COMPLETE, sock, 60_000);
    return {
      server,
      sock,
      cleanup: async () => {
        await server.stop();
        t.cleanup();
      },
    };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

export const SAMPLE_SOURCE = `import { readFile } from "node:fs/promises";

export const LIMIT = 10;

/** Adds. */
export function add(a: number, b: number): number {
  // note: 
  return a + b;
}

export class Box {
  value = 1;
}
`;

/** The cursor at the end of "// note: " (inside a line comment: any one-line completion parses). */
export const COMMENT_CURSOR = { line: 7, column: 11 };

export function request(constraints: Json = {}, context: Json = {}, trace?: string): Json {
  return {
    action: "complete",
    context: {
      language: "typescript",
      file_path: "src/sample.ts",
      source_code: SAMPLE_SOURCE,
      cursor: COMMENT_CURSOR,
      ...context,
    },
    // The default inference limit is an editor's keystroke budget that two loaded cores can exceed; tests
    // about limits set their own.
    constraints: { timeout_ms: 30_000, max_tokens: 8, inference_timeout_ms: 20_000, ...constraints },
    ...(trace ? { trace_id: trace } : {}),
  };
}

async function health(sock: string): Promise<Json> {
  return JSON.parse((await httpRequest(sock, { path: "/healthz" })).body) as Json;
}

function hugeFile(lines: number): string {
  const out: string[] = [];
  for (let i = 0; out.length < lines; i++)
    out.push(
      `export function fn${i}(x: number): number {`,
      `  const y${i} = x * ${i};`,
      `  return y${i} + 1;`,
      `}`,
      ``,
    );
  return out.join("\n") + "\n";
}

describe("agent-complete with the tiny FIM model (socket, real inference)", () => {
  let ctx: Awaited<ReturnType<typeof serveComplete>>;
  beforeAll(async () => {
    ctx = await serveComplete(modelEnv(true));
  }, 90_000);
  afterAll(() => ctx.cleanup());

  it("reports ready with the model, FIM detected and the self-probe passed", async () => {
    const h = await health(ctx.sock);
    expect(h.status).toBe("ok");
    expect(h).toMatchObject({ model_state: "ready", fim_ok: true, prompt_format: "fim", threads: 1, sequences: 2 });
    // The warm-up typed its dry keystrokes through the non-model stages before the agent listened.
    const warmup = h.warmup as { keystrokes: number; ms: number };
    expect(warmup.keystrokes).toBe(DEFAULT_WARMUP_KEYSTROKES);
    expect(warmup.ms).toBeGreaterThan(0);
  });

  it("tokenises the buffer ahead after a request (prewarm), shown in /healthz", async () => {
    const before = (await health(ctx.sock)).prewarm as { buffers: number; chunks: number };
    const { json } = await invokeHttp(ctx.sock, request());
    expect(json.status).toBe("success");
    // The buffer is scheduled when the request ends; wait for its chunks (health answers between slices).
    let after = before;
    for (const until = Date.now() + 30_000; after.chunks === before.chunks && Date.now() < until;)
      after = (await health(ctx.sock)).prewarm as typeof before;
    expect(after.buffers).toBeGreaterThan(before.buffers);
    expect(after.chunks).toBeGreaterThan(before.chunks);
  });

  it("loads and generates: every stage timed, accounting in the payload", async () => {
    const { status, json } = await invokeHttp(ctx.sock, request());
    expect(status).toBe(200);
    expect(json.status).toBe("success");
    const p = json.payload as Json;
    expect(p).toMatchObject({ engine: "model", syntax_ok: true, retries: 0, insert_at: COMMENT_CURSOR });
    expect(typeof p.completion).toBe("string");
    for (const stage of ["accept", "slice", "prompt", "budget", "inference", "syntax", "response"])
      expect(json.timings_ms).toHaveProperty(stage);
    expect(p.prompt).toMatchObject({
      format: "fim",
      fim_tokens: { prefix: "<|fim_prefix|>", suffix: "<|fim_suffix|>", middle: "<|fim_middle|>" },
      max_tokens: 8,
    });
    expect(p.context.tokens_by_source.symbols).toBeGreaterThan(0);
    expect(p.context.tokens_by_source.enclosing_code).toBeGreaterThan(0);
    expect(p.context.truncated).toBe(false);
    expect(p.inference.attempts).toHaveLength(1);
    expect(p.inference.generated_tokens).toBeGreaterThan(0);
  });

  it("sorted CURRENT_SYMBOLS block; two requests on the same file share a byte-identical prompt prefix and reuse the KV cache", async () => {
    const a = (await invokeHttp(ctx.sock, request({ debug_prompt: true }))).json.payload as Json;
    const b = (
      await invokeHttp(ctx.sock, request({ debug_prompt: true, best_effort: true }, { cursor: { line: 8, column: 2 } }))
    ).json.payload as Json;
    const pa = a.prompt.prefix_text as string;
    const pb = b.prompt.prefix_text as string;
    expect(pa).toContain(
      '// CURRENT_SYMBOLS\n// class Box\n// const LIMIT\n// function add\n// import readFile from "node:fs/promises"\n// END_SYMBOLS\n',
    );
    expect(a.prompt.stable_prefix.sha1).toBe(b.prompt.stable_prefix.sha1);
    const shared = pa.indexOf("// note:");
    expect(shared).toBeGreaterThan(a.prompt.stable_prefix.chars);
    expect(pb.slice(0, shared)).toBe(pa.slice(0, shared));
    // Byte-level vocabulary: one token per byte, so the shared text is reused token for token.
    expect(b.inference.kv_reused_tokens).toBeGreaterThanOrEqual(Buffer.byteLength(pa.slice(0, shared)));
    const again = (await invokeHttp(ctx.sock, request({ debug_prompt: true }))).json.payload as Json;
    expect(again.prompt.prefix_text).toBe(pa);
    expect(again.inference.kv_reused_tokens).toBeGreaterThanOrEqual(Buffer.byteLength(pa.slice(0, shared)));
  });

  it("an inference limit overrun → AIP_ERR_MODEL_TIMEOUT 'Inference took X ms, limit is Y ms' with a suggestion", async () => {
    const { status, json } = await invokeHttp(ctx.sock, request({ max_tokens: 900, inference_timeout_ms: 5 }));
    expect(status).toBe(504);
    expect(json.error).toMatchObject({ type: "AIP_ERR_MODEL_TIMEOUT", limit_ms: 5 });
    expect(json.error.detail).toMatch(/^Inference took \d+ ms, limit is 5 ms$/);
    expect(json.error.suggestion).toMatch(/Reduce context length/);
  });

  it("a tiny request deadline leaves a tiny inference limit → AIP_ERR_MODEL_TIMEOUT, not the generic timeout", async () => {
    const { json } = await invokeHttp(ctx.sock, request({ max_tokens: 900, timeout_ms: 300 }));
    expect(json.error.type).toBe("AIP_ERR_MODEL_TIMEOUT");
    expect(json.error.limit_ms).toBeLessThan(300);
  });

  it("output that does not parse is retried twice with other seeds, then the model-free engine answers (reason syntax_gate, counted)", async () => {
    const { status, json } = await invokeHttp(
      ctx.sock,
      request({ max_tokens: 12 }, { cursor: { line: 8, column: 13 } }),
    );
    expect(status).toBe(200);
    expect(json.payload).toMatchObject({ engine: "lite", reason: "syntax_gate" });
    expect(json.payload.reason_detail).toMatch(/^The completion failed the syntax check after 3 attempts: /);
    const attempts = json.payload.model_attempts as Json[];
    expect(attempts.map((x) => x.seed)).toEqual([0, 1, 2]);
    expect(attempts.every((x) => x.syntax_ok === false)).toBe(true);
    expect((await health(ctx.sock)).model_engine).toMatchObject({ kind: "local", fallbacks: { syntax_gate: 1 } });
  });

  it("best_effort returns the best candidate flagged, with the retries counted", async () => {
    const { json } = await invokeHttp(
      ctx.sock,
      request({ max_tokens: 12, best_effort: true }, { cursor: { line: 8, column: 13 } }),
    );
    expect(json.status).toBe("success");
    expect(json.payload).toMatchObject({ syntax_ok: false, best_effort: true, retries: 2 });
    expect(json.payload.inference.attempts).toHaveLength(3);
  });

  it("a huge file is trimmed (farthest code first) with an AIP_ERR_CONTEXT_TRUNCATED warning", async () => {
    const source = hugeFile(3000);
    const { json } = await invokeHttp(
      ctx.sock,
      request({ best_effort: true }, { source_code: source, cursor: { line: 1502, column: 2 } }),
    );
    expect(json.status).toBe("success");
    expect(json.warnings[0]).toMatchObject({ type: "AIP_ERR_CONTEXT_TRUNCATED" });
    const c = json.payload.context as Json;
    expect(c.truncated).toBe(true);
    expect(c.trimmed.prefix_lines).toBeGreaterThan(1000);
    expect(c.trimmed.suffix_lines).toBeGreaterThan(1000);
    expect(c.trimmed.kept_lines).toBe(0);
    expect(json.payload.prompt.tokens).toBeLessThanOrEqual(1024 - 8);
  });

  it("… or the error when constraints.allow_truncation is false", async () => {
    const { status, json } = await invokeHttp(
      ctx.sock,
      request({ allow_truncation: false }, { source_code: hugeFile(3000), cursor: { line: 1502, column: 2 } }),
    );
    expect(status).toBe(413);
    expect(json.error).toMatchObject({ type: "AIP_ERR_CONTEXT_TRUNCATED" });
  });

  it("concurrent requests use separate sequences", async () => {
    const long = { max_tokens: 300, best_effort: true, inference_timeout_ms: 20_000 };
    const [a, b] = await Promise.all([
      invokeHttp(ctx.sock, request(long, { file_path: "src/a.ts" })),
      invokeHttp(ctx.sock, request(long, { file_path: "src/b.ts" })),
    ]);
    const seqs = [a.json.payload.inference.attempts[0].sequence, b.json.payload.inference.attempts[0].sequence];
    expect(new Set(seqs).size).toBe(2);
  });

  it("latest wins: a newer request for the same document cancels the running one inside the llama context", async () => {
    const before = (await health(ctx.sock)).inference as Json;
    const doc = { document_id: "file:///src/sample.ts", client_id: "nvim-1" };
    const first = invokeHttp(ctx.sock, request({ ...doc, max_tokens: 900, inference_timeout_ms: 30_000 }, {}, "t-old"));
    // Readiness: the first request holds a sequence (it is generating).
    for (let h = await health(ctx.sock); h.sequences_busy === 0; h = await health(ctx.sock))
      await new Promise((r) => setImmediate(r));
    const second = await invokeHttp(ctx.sock, request({ ...doc, best_effort: true }, {}, "t-new"));
    const old = await first;
    expect(old.status).toBe(499);
    expect(old.json.error).toMatchObject({ type: "AIP_ERR_CANCELLED", superseded_by: "t-new" });
    expect(second.json.status).toBe("success");
    const after = await health(ctx.sock);
    expect(after.superseded).toBeGreaterThanOrEqual(1);
    expect(after.inference.aborted).toBe(before.aborted + 1);
    // Another client's request for the same document is not superseded.
    const other = await invokeHttp(
      ctx.sock,
      request({ document_id: doc.document_id, client_id: "vscode-2", best_effort: true }),
    );
    expect(other.json.status).toBe("success");
  });

  // Last in this suite, on its server: the counters the tests above assert are read before these requests.
  it("Python: the model's text when it passes the syntax gate, complete-lite's after 2 retries; every stage timed", async () => {
    const { json } = await invokeHttp(ctx.sock, pythonRequest());
    expect(json.status, JSON.stringify(json.error)).toBe("success");
    const p = json.payload as Json;
    for (const stage of ["accept", "slice", "prompt", "budget", "inference", "syntax"])
      expect(json.timings_ms).toHaveProperty(stage);
    if (p.engine === "model") {
      expect(p.syntax_ok).toBe(true);
      expect(p.retries).toBeGreaterThanOrEqual(0);
      expect(p.context.tokens_by_source.symbols).toBeGreaterThan(0);
    } else {
      expect(p.engine).toBe("lite");
      expect(p.engine_reason).toMatch(/syntax gate after 2 retries/);
      expect(p.retries).toBe(2);
      expect(p.model_attempts).toHaveLength(3);
    }
  }, 60_000);

  describe("broken buffers", () => {
    for (const shape of SHAPES) {
      it(`complete: ${shape}`, async () => {
        const { source, cursor } = brokenBuffer(shape);
        const body = {
          action: "complete",
          context: { language: "typescript", file_path: "src/paths.ts", source_code: source, cursor },
          // The default inference limit is an editor's keystroke budget; the suite's load on two cores can
          // exceed it, and this test is about broken buffers, not speed.
          constraints: { timeout_ms: 30_000, max_tokens: 8, best_effort: true, inference_timeout_ms: 20_000 },
        };
        const { json } = await invokeHttp(ctx.sock, body);
        expect(json.status, JSON.stringify(json.error ?? json.problem ?? json)).toBe("success");
        expect(json.payload.engine).toBe("model");
        expectDiagnostics(json.payload, cursor.line);
        expect(typeof json.payload.completion).toBe("string");
      });
    }
  });
});

describe("agent-complete with a model without FIM tokens", () => {
  let ctx: Awaited<ReturnType<typeof serveComplete>>;
  beforeAll(async () => {
    // No dry warm-up keystrokes here: the first suite tests the warm-up.
    ctx = await serveComplete(modelEnv(false, { AIP_WARMUP_KEYSTROKES: "0" }));
  }, 90_000);
  afterAll(() => ctx.cleanup());

  it("uses a prefix prompt and reports fim_ok false", async () => {
    const h = await health(ctx.sock);
    expect(h).toMatchObject({ status: "ok", fim_ok: false, prompt_format: "prefix" });
    const { json } = await invokeHttp(ctx.sock, request({ best_effort: true }));
    expect(json.payload.prompt).toMatchObject({ format: "prefix", fim_tokens: null });
  });
});

describe("agent-complete without a model", () => {
  let ctx: Awaited<ReturnType<typeof serveComplete>>;
  beforeAll(async () => {
    ctx = await serveComplete({ AIP_MODEL: undefined, AIP_MODEL_URL: undefined });
  }, 90_000);
  afterAll(() => ctx.cleanup());

  it("starts and reports degraded with the reason in /healthz", async () => {
    const h = await health(ctx.sock);
    expect(h).toMatchObject({ status: "degraded", model_state: "none", fim_ok: false });
    expect(h.reason).toMatch(/AIP_MODEL/);
  });

  it("answers complete with AIP_ERR_UNAVAILABLE naming the reason", async () => {
    const { status, json } = await invokeHttp(ctx.sock, request());
    expect(status).toBe(503);
    expect(json.error.type).toBe("AIP_ERR_UNAVAILABLE");
    expect(json.error.detail).toMatch(/no model/);
  });

  it('serves the lite engine when the caller asks for constraints.fallback "lite"', async () => {
    const { json } = await invokeHttp(
      ctx.sock,
      request({ fallback: "lite" }, { source_code: "const alpha = 1;\nal", cursor: { line: 2, column: 2 } }),
    );
    expect(json.payload).toMatchObject({ engine: "lite", model_state: "none" });
    expect((json.payload.items as Json[]).map((i) => i.label)).toContain("alpha");
  });

  it("answers Python from complete-lite and says why", async () => {
    const { json } = await invokeHttp(ctx.sock, pythonRequest());
    expect(json.status, JSON.stringify(json.error)).toBe("success");
    expect(json.payload).toMatchObject({ engine: "lite", model_state: expect.any(String) });
    const p = json.payload as Json;
    expect(p.engine_reason).toMatch(/model/);
    expect((p.items as Json[]).map((i) => i.label)).toContain("full");
  }, 60_000);

  it("a model that fails to load → degraded with the reason", async () => {
    const broken = await serveComplete({ AIP_MODEL: import.meta.filename });
    try {
      const h = await health(broken.sock);
      expect(h).toMatchObject({ status: "degraded", model_state: "failed" });
      expect(h.reason).toMatch(/failed to load/);
    } finally {
      await broken.cleanup();
    }
  }, 60_000);
});
