import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenCounter } from "../../../../agents/lib/llm/budget.js";
import { DEFAULT_WARMUP_KEYSTROKES, defaultThreads, modelConfig } from "../../../../agents/lib/llm/config.js";
import { ModelHost } from "../../../../agents/lib/llm/host.js";
import { tinyModel } from "./tiny-model.js";

const base = { maxTokens: 16, temperature: 0, seed: 0, stop: [] as string[] };

describe("ModelHost with the tiny FIM model (real node-llama-cpp)", () => {
  const host = new ModelHost(modelConfig({ path: tinyModel(true), threads: 1, contextSize: 512, sequences: 2 }, {}));
  beforeAll(async () => {
    await host.load();
    await host.selfProbe();
  }, 60_000);
  afterAll(() => host.dispose());

  it("loads, detects FIM from the GGUF metadata and passes the self-probe", () => {
    expect(host.state.status).toBe("ready");
    expect(host.fim).toMatchObject({ available: true, format: "fim", source: "gguf", ok: true });
    expect(host.fim.tokens?.prefix.text).toBe("<|fim_prefix|>");
    expect(host.health()).toMatchObject({ model_state: "ready", fim_ok: true, prompt_format: "fim", threads: 1 });
  });

  it("generates exactly max_tokens greedily (the tiny model's end token is never the greedy choice)", async () => {
    const g = await host.generate(host.tokenize("const a = 1;\n"), { ...base, signal: new AbortController().signal });
    expect(g.tokens).toBeGreaterThanOrEqual(16);
    expect(g.stopReason).toBe("maxTokens");
    expect(g.promptTokens).toBe(host.tokenize("const a = 1;\n").length);
  });

  it("reuses the KV cache for a repeated prefix", async () => {
    const prompt = host.tokenize("export function longName(a: number) {\n  return a;\n}\n".repeat(4));
    await host.generate(prompt, { ...base, signal: new AbortController().signal });
    const again = await host.generate([...prompt, ...host.tokenize("// more\n")], {
      ...base,
      signal: new AbortController().signal,
    });
    expect(again.kvReused).toBeGreaterThanOrEqual(prompt.length);
  });

  it("runs concurrent requests on separate sequences", async () => {
    const signal = new AbortController().signal;
    const [a, b] = await Promise.all([
      host.generate(host.tokenize("let x = 1;\n"), { ...base, signal }),
      host.generate(host.tokenize("let y = 2;\n"), { ...base, signal }),
    ]);
    expect(new Set([a.sequence, b.sequence]).size).toBe(2);
    expect(host.stats.peakBusy).toBe(2);
  });

  it("an abort reaches the llama context: generation stops early and the sequence is free again", async () => {
    const ac = new AbortController();
    const reason = new Error("stop");
    let tokens = 0;
    const run = host.generate(host.tokenize("function f() {\n"), { ...base, maxTokens: 400, signal: ac.signal });
    // Abort on readiness (the sequence is busy = generation started), not after a sleep.
    while (host.busySequences === 0) await new Promise((r) => setImmediate(r));
    ac.abort(reason);
    await expect(run).rejects.toBe(reason);
    tokens = host.stats.generatedTokens;
    expect(host.stats.aborted).toBeGreaterThanOrEqual(1);
    expect(host.busySequences).toBe(0);
    expect(tokens).toBeGreaterThan(0);
  });

  it("a waiting request is abortable before it gets a sequence", async () => {
    const signal = new AbortController().signal;
    const long = { ...base, maxTokens: 200, signal };
    const busy = [host.generate(host.tokenize("a"), long), host.generate(host.tokenize("b"), long)];
    const ac = new AbortController();
    const queued = host.generate(host.tokenize("c"), { ...base, signal: ac.signal });
    ac.abort(new Error("superseded"));
    await expect(queued).rejects.toThrow("superseded");
    await Promise.all(busy);
  });

  it("tokenises in pieces for a byte-level vocabulary: the same tokens as a whole, the stable pieces remembered", () => {
    expect(host.piecewise).toBe(true);
    expect(host.health()).toMatchObject({ piecewise_tokenization: true });
    const lines = [
      "// Language: typescript\n",
      "export function f(a: number) {\n",
      "  const b = a + 1;\n",
      "  return b",
    ];
    expect(lines.flatMap((l) => host.tokenize(l))).toEqual(host.tokenize(lines.join("")));
    const first = host.tokenizeStable(lines[0]!);
    expect(host.tokenizeStable(lines[0]!)).toBe(first); // remembered: the same array
    expect(host.tokenize("")).toEqual([]);
  });

  it("calibrates tiktoken to the model's tokenizer (byte-level: several model tokens per tiktoken token)", () => {
    const counter = new TokenCounter((t) => host.tokenize(t));
    expect(counter.ratio).toBeGreaterThan(2);
    const text = "export const value = computeSomething(42);\n";
    expect(counter.count(text)).toBeGreaterThanOrEqual(Math.floor(host.tokenize(text).length * 0.7));
  });
});

describe("ModelHost without FIM, without a model, with a broken model", () => {
  it("a vocabulary without FIM tokens uses the prefix format", async () => {
    const host = new ModelHost(modelConfig({ path: tinyModel(false), threads: 1, contextSize: 256, sequences: 1 }, {}));
    await host.load();
    await host.selfProbe();
    expect(host.fim).toMatchObject({ available: false, format: "prefix" });
    expect(host.health()).toMatchObject({ fim_ok: false, prompt_format: "prefix" });
    await host.dispose();
  }, 60_000);

  it("no AIP_MODEL → state none with the reason", async () => {
    const host = new ModelHost(modelConfig({}, {}));
    await host.load();
    expect(host.state).toMatchObject({ status: "none", reason: expect.stringContaining("AIP_MODEL") });
  });

  it("a file that is not a model → state failed with the reason, no throw", async () => {
    const host = new ModelHost(modelConfig({ path: import.meta.filename, threads: 1 }, {}));
    await host.load();
    expect(host.state).toMatchObject({ status: "failed", reason: expect.stringContaining("failed to load") });
  }, 60_000);

  it("threads default to half the cores, at most 4 (1 on a 2-core host: measured 50x faster than 2 here)", () => {
    expect(defaultThreads(2)).toBe(1);
    expect(defaultThreads(16)).toBe(4);
    expect(() => modelConfig({}, { AIP_MODEL_THREADS: "zero" })).toThrow(/AIP_MODEL_THREADS/);
  });

  it("warm-up keystrokes: AIP_WARMUP_KEYSTROKES, a named default, and a clear error for a bad value", () => {
    expect(modelConfig({}, {}).warmupKeystrokes).toBe(DEFAULT_WARMUP_KEYSTROKES);
    expect(modelConfig({}, { AIP_WARMUP_KEYSTROKES: "0" }).warmupKeystrokes).toBe(0);
    expect(modelConfig({ warmupKeystrokes: 7 }, { AIP_WARMUP_KEYSTROKES: "50" }).warmupKeystrokes).toBe(7);
    expect(() => modelConfig({}, { AIP_WARMUP_KEYSTROKES: "-1" })).toThrow(
      /AIP_WARMUP_KEYSTROKES must be an integer from 0 to 100000, got "-1"/,
    );
  });
});
