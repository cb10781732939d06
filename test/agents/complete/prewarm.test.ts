/** Idle-time tokenisation (agents/complete/prewarm.ts) and the file chunks the prompt is tokenised in, with the real tiny model. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ParseCache } from "../../../agents/lib/code/cache.js";
import { lineStarts } from "../../../agents/lib/code/position.js";
import { TokenCounter } from "../../../agents/lib/llm/budget.js";
import { modelConfig } from "../../../agents/lib/llm/config.js";
import { ModelHost } from "../../../agents/lib/llm/host.js";
import { LatestWins } from "../../../protocol/transport/latest.js";
import { CHUNK_LINES, fileChunks, Lines } from "../../../agents/complete/context.js";
import { createComplete } from "../../../agents/complete/handler.js";
import { Prewarm } from "../../../agents/complete/prewarm.js";
import type { AipRequest } from "../../../protocol/contract/schemas.js";
import { standaloneContext } from "../../../agents/lib/runtime/context.js";
import { createLogger } from "../../../protocol/util/log.js";
import type { HandlerContext } from "../../../agents/lib/runtime/types.js";
import { tinyModel } from "../lib/llm/tiny-model.js";

/** A module of `n` small functions (5 lines each), some lines repeated as real code repeats them. */
function moduleOf(n: number): string {
  const parts = ['import { join } from "node:path";\n'];
  for (let i = 0; i < n; i++)
    parts.push(
      `\nexport function f${i}(a: number, b: string): string {\n  const v${i} = a * ${i} + b.length;\n  return join(b, String(v${i}));\n}\n`,
    );
  return parts.join("");
}

function ctx(traceId: string): HandlerContext {
  return standaloneContext({ traceId, budgetMs: 30_000, log: createLogger({ agentName: "test", destination: false }) });
}

function request(source: string, line: number, column: number): AipRequest {
  return {
    action: "complete",
    context: { language: "typescript", file_path: "m.ts", source_code: source, cursor: { line, column } },
    // The default inference limit is an editor's keystroke budget that two loaded cores can exceed.
    constraints: { max_tokens: 4, best_effort: true, inference_timeout_ms: 20_000 },
  } as unknown as AipRequest;
}

/** Counts the calls that reach llama.cpp's tokenizer (memo misses) while `fn` runs. */
async function rawTokenizeCalls(host: ModelHost, fn: () => Promise<unknown>): Promise<number> {
  const original = host.tokenize.bind(host);
  let calls = 0;
  host.tokenize = (text: string) => {
    calls++;
    return original(text);
  };
  try {
    await fn();
  } finally {
    host.tokenize = original;
  }
  return calls;
}

describe("file chunks", () => {
  it("Lines.chunks cut at file lines that are multiples of CHUNK_LINES and join to text(); whole chunks are fileChunks' texts", () => {
    const source = moduleOf(40);
    const starts = lineStarts(source);
    const whole = new Set([...fileChunks(source, starts)].map((c) => c.text));
    expect([...fileChunks(source, starts)].map((c) => c.text).join("")).toBe(source);
    for (const [first, count] of [
      [0, 50],
      [3, 70],
      [17, 100],
      [32, 16],
      [100, starts.length - 100],
    ] as const) {
      const end = first + count < starts.length ? starts[first + count]! : source.length;
      const view = new Lines(source, starts, first, count, end);
      for (const [from, to] of [
        [0, count],
        [1, count - 2],
        [5, 6],
        [count, count],
      ] as const) {
        const chunks = view.chunks(from, to);
        expect(chunks.join("")).toBe(view.text(from, to));
        let line = first + from;
        for (const [i, chunk] of chunks.entries()) {
          const lines = chunk.split(/(?<=\n)/).length;
          // Every chunk but the first starts on a multiple; every chunk but the last ends on one.
          if (i > 0) expect(line % CHUNK_LINES).toBe(0);
          line += lines;
          if (i < chunks.length - 1) expect(line % CHUNK_LINES).toBe(0);
          if (i > 0 && i < chunks.length - 1) expect(whole.has(chunk)).toBe(true);
        }
      }
    }
  });
});

describe("prewarm with the tiny model", () => {
  const host = new ModelHost(
    modelConfig({ path: tinyModel(true), threads: 1, contextSize: 1024, sequences: 1, warmupKeystrokes: 0 }, {}),
  );
  let counter: TokenCounter;
  beforeAll(async () => {
    await host.load();
    counter = new TokenCounter((t) => host.tokenize(t));
  }, 60_000);
  afterAll(() => host.dispose());

  it("works only while no request is in a non-model stage, then has every chunk tokenised and every line counted", async () => {
    const prewarm = new Prewarm(host, () => counter);
    const source = moduleOf(60);
    const starts = lineStarts(source);
    prewarm.enter();
    prewarm.schedule(source, starts);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(prewarm.stats.chunks).toBe(0);
    expect(prewarm.pending).toBe(true);
    prewarm.leave();
    await prewarm.idle();
    const chunks = [...fileChunks(source, starts)];
    expect(prewarm.stats.chunks).toBe(chunks.length);
    expect(prewarm.stats.slices).toBeGreaterThan(0);
    // Every chunk is now a memo hit: no call reaches llama.cpp, and the tokens are the chunk's own.
    const calls = await rawTokenizeCalls(host, async () => {
      for (const c of chunks) expect(host.tokenizeStable(c.text).length).toBeGreaterThan(0);
    });
    expect(calls).toBe(0);
    for (const c of chunks.slice(0, 5)) expect([...host.tokenizeStable(c.text)]).toEqual(host.tokenize(c.text));
  });

  it("a cursor jump after prewarm tokenises only the code near the cursor, and the prompt is the same as without prewarm", async () => {
    const source = moduleOf(150); // ~750 lines, ~27,000 characters: the window (8,192 tokens, a byte each) holds only part of it
    const lastLine = source.split("\n").length;
    const [line, column] = [lastLine - 300, 2];
    const run = async (
      withPrewarm: boolean,
    ): Promise<{ calls: number; tokens: number; completion: string; prefix: string }> => {
      const h = new ModelHost(
        modelConfig({ path: tinyModel(true), threads: 1, contextSize: 8192, sequences: 1, warmupKeystrokes: 0 }, {}),
      );
      await h.load();
      try {
        const c = new TokenCounter((t) => h.tokenize(t));
        const prewarm = withPrewarm ? new Prewarm(h, () => c) : undefined;
        const complete = createComplete({
          host: h,
          counter: () => c,
          latest: new LatestWins(),
          cache: new ParseCache(),
          ...(prewarm ? { prewarm } : {}),
        });
        // First a request far away (near the top), then idle, then the jump.
        await complete(request(source, 10, 2), ctx("first"));
        await prewarm?.idle();
        let out: Record<string, unknown> = {};
        const calls = await rawTokenizeCalls(h, async () => {
          out = (await complete(
            {
              ...request(source, line, column),
              constraints: { max_tokens: 4, best_effort: true, inference_timeout_ms: 20_000, debug_prompt: true },
            } as unknown as AipRequest,
            ctx("jump"),
          )) as Record<string, unknown>;
        });
        const prompt = out.prompt as { tokens: number; prefix_text: string };
        return { calls, tokens: prompt.tokens, completion: out.completion as string, prefix: prompt.prefix_text };
      } finally {
        await h.dispose();
      }
    };
    const cold = await run(false);
    const warm = await run(true);
    expect(warm.prefix).toBe(cold.prefix);
    expect(warm.tokens).toBe(cold.tokens);
    expect(warm.completion).toBe(cold.completion);
    // Without prewarm every farther chunk is a miss; with it only the pieces near the cursor are.
    // (measured: 11 calls against 7: the 7 are the header, local symbols, the function around the
    // cursor in three pieces and the two partial chunks at the ends of the farther code)
    expect(cold.calls - warm.calls).toBeGreaterThanOrEqual(3);
    expect(warm.calls).toBeLessThanOrEqual(8);
  }, 60_000);
});
