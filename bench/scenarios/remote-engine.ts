/**
 * The inference-server client's cost: the same FIM request to the same local contract server
 * (tools/conformance/fake-engine.ts), once through RemoteHost.generate (prompt tokens back to text,
 * dialect, pool, streaming parser, circuit, counters) and once as a direct undici request with the
 * body written by hand, interleaved A B B A; streamed and not. Also how soon the server sees an
 * aborted request's connection close.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { invokeHttp } from "../../protocol/transport/client.js";
import { serve, type Served } from "../../tools/conformance/process.js";
import { packageRootDir } from "../../orchestrator/core/config.js";
import { modelConfig } from "../../agents/lib/llm/config.js";
import { remoteConfig } from "../../agents/lib/llm/remote/config.js";
import { RemoteHost } from "../../agents/lib/llm/remote/host.js";
import { FakeEngine } from "../../tools/conformance/fake-engine.js";
import { percentileOf } from "../../protocol/util/percentile.js";
import { table, type ScenarioBody } from "../lib/scenario.js";

const MODEL = "bench-model";
/** A prompt the size of a completion's (~6 KB before the cursor, ~2 KB after). */
const PREFIX = Array.from({ length: 150 }, (_, i) => `  const v${i} = compute(a${i}, "text ${i}");\n`).join("");
const SUFFIX = Array.from({ length: 50 }, (_, i) => `  use(v${i});\n`).join("");

interface Side {
  p50_ms: number;
  p95_ms: number;
  n: number;
}

function side(samples: number[]): Side {
  const r = (x: number): number => Math.round(x * 1000) / 1000;
  return { p50_ms: r(percentileOf(samples, 50)), p95_ms: r(percentileOf(samples, 95)), n: samples.length };
}

async function direct(pool: Pool, stream: boolean): Promise<string> {
  const res = await pool.request({
    method: "POST",
    path: "/v1/completions",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: MODEL,
      prompt: PREFIX,
      suffix: SUFFIX,
      max_tokens: 64,
      stop: ["\n\n"],
      stream,
      temperature: 0,
      seed: 0,
    }),
  });
  const text = await res.body.text();
  if (!stream) return ((JSON.parse(text) as { choices: { text: string }[] }).choices[0]?.text ?? "") as string;
  let out = "";
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    out += (JSON.parse(line.slice(6)) as { choices: { text?: string }[] }).choices[0]?.text ?? "";
  }
  return out;
}

export const remoteEngine: ScenarioBody = {
  async run(ctx) {
    const perBlock = ctx.quick ? 100 : 300;
    const blocks = ctx.quick ? 4 : 10;
    const engine = await new FakeEngine().start();
    engine.models = [MODEL];
    engine.answer = () => " total += v;\n  return total;";
    const results: Record<string, { client: Side; direct: Side; p50_overhead_ms: number; p50_ratio: number }> = {};
    const rows: (string | number)[][] = [];
    try {
      for (const stream of [false, true]) {
        const env = { AIP_MODEL_URL: engine.url, AIP_MODEL_NAME: MODEL, AIP_MODEL_STREAM: stream ? "1" : "0" };
        const host = new RemoteHost(modelConfig({}, env), remoteConfig(env, 1)!);
        const pool = new Pool(engine.url, { connections: 1, pipelining: 1, keepAliveTimeout: 30_000 });
        const prompt = host.fimPrompt(host.tokenize(PREFIX), host.tokenize(SUFFIX));
        const options = { maxTokens: 64, temperature: 0, seed: 0, stop: ["\n\n"] };
        const viaClient = async (): Promise<string> =>
          (await host.generate(prompt, { ...options, signal: AbortSignal.timeout(10_000) })).text;
        const viaDirect = (): Promise<string> => direct(pool, stream);
        if ((await viaClient()) !== (await viaDirect())) throw new Error("the two paths answered differently");
        for (let i = 0; i < 200; i++) {
          await viaClient();
          await viaDirect();
        }
        const samples = { client: [] as number[], direct: [] as number[] };
        for (let b = 0; b < blocks; b++) {
          const order = b % 2 === 0 ? (["client", "direct"] as const) : (["direct", "client"] as const);
          for (const who of order) {
            const fn = who === "client" ? viaClient : viaDirect;
            for (let i = 0; i < perBlock; i++) {
              const t = performance.now();
              await fn();
              samples[who].push(performance.now() - t);
            }
          }
          ctx.progress(`[remote-engine] ${stream ? "streamed" : "one answer"} block ${b + 1}/${blocks}`);
        }
        const c = side(samples.client);
        const d = side(samples.direct);
        const key = stream ? "streamed" : "one_answer";
        results[key] = {
          client: c,
          direct: d,
          p50_overhead_ms: Math.round((c.p50_ms - d.p50_ms) * 1000) / 1000,
          p50_ratio: Math.round((c.p50_ms / d.p50_ms) * 100) / 100,
        };
        rows.push([key, d.p50_ms, c.p50_ms, results[key].p50_overhead_ms, results[key].p50_ratio, d.p95_ms, c.p95_ms]);
        await host.dispose();
        await pool.destroy();
      }
      // Cancellation: abort once the server holds the request; time until it sees the connection close.
      const env = { AIP_MODEL_URL: engine.url, AIP_MODEL_NAME: MODEL };
      const host = new RemoteHost(modelConfig({}, env), remoteConfig(env, 1)!);
      const prompt = host.fimPrompt(host.tokenize(PREFIX), host.tokenize(SUFFIX));
      engine.fault = { hold: true };
      const cancel: number[] = [];
      for (let i = 0; i < (ctx.quick ? 50 : 200); i++) {
        const ac = new AbortController();
        const arrived = engine.next("/v1/completions");
        const gen = host.generate(prompt, { maxTokens: 64, temperature: 0, seed: 0, stop: [], signal: ac.signal });
        const req = await arrived;
        const closed = engine.closed(req);
        const t = performance.now();
        ac.abort(new Error("superseded"));
        await gen.catch(() => undefined);
        await closed;
        cancel.push(req.closedAt! - t);
      }
      engine.fault = {};
      engine.release();
      await host.dispose();
      const cancelled = side(cancel);
      const down = await engineDown(ctx.quick ? 100 : 300, ctx.progress);
      const markdown = [
        `Same FIM request (${PREFIX.length + SUFFIX.length} characters of prompt) to the same local server, ${blocks} blocks of ${perBlock} sequential requests per path, interleaved.`,
        "",
        table(
          ["mode", "direct p50 ms", "client p50 ms", "overhead p50 ms", "ratio p50", "direct p95 ms", "client p95 ms"],
          rows,
        ),
        "",
        `Cancellation: the server saw the aborted request's connection close after p50 ${cancelled.p50_ms} ms, p95 ${cancelled.p95_ms} ms (${cancelled.n} aborts).`,
        "",
        `Engine down (agent-complete with its circuit open) vs agent-complete-lite, the same completion over each socket, interleaved: p50 ${down.down.p50_ms} vs ${down.lite.p50_ms} ms, p95 ${down.down.p95_ms} vs ${down.lite.p95_ms} ms.`,
      ].join("\n");
      return {
        parameters: { blocks, per_block: perBlock, prompt_chars: PREFIX.length + SUFFIX.length, connections: 1 },
        results: { ...results, cancel_to_close: cancelled, engine_down: down },
        markdown,
      };
    } finally {
      await engine.stop();
    }
  },
};

/** A completion request in a ~200-line module (the kind complete-lite answers in a few ms). */
function completion(i: number): Record<string, unknown> {
  const lines = Array.from(
    { length: 200 },
    (_, k) => `export function f${k}(a: number): number {\n  return a + ${k};\n}\n`,
  );
  const source = `${lines.join("")}const total = f1${i % 10}(`;
  const line = source.split("\n").length;
  return {
    action: "complete",
    context: {
      language: "typescript",
      file_path: "src/m.ts",
      source_code: source,
      cursor: { line, column: source.length - source.lastIndexOf("\n") - 1 },
    },
    constraints: { timeout_ms: 5000, max_tokens: 16 },
  };
}

/** agent-complete whose engine does not answer (circuit open) against agent-complete-lite, request for request. */
async function engineDown(
  n: number,
  progress: (m: string) => void,
): Promise<{ down: Side; lite: Side; engines: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "aip-bench-remote-"));
  const root = packageRootDir();
  const saved = { ...process.env };
  let lite: Served | undefined;
  let complete: Served | undefined;
  try {
    lite = await serve(join(root, "dist/agents/complete-lite/main.js"), join(dir, "lite.sock"), 60_000);
    Object.assign(process.env, {
      AIP_MODEL_URL: "http://127.0.0.1:9",
      AIP_MODEL_NAME: "m",
      AIP_MODEL_REPROBE_MS: "600000",
    });
    delete process.env.AIP_MODEL;
    complete = await serve(join(root, "dist/agents/complete/main.js"), join(dir, "complete.sock"), 60_000);
    process.env = saved;
    const samples = { down: [] as number[], lite: [] as number[] };
    const engines = new Set<string>();
    const one = async (who: "down" | "lite", i: number): Promise<void> => {
      const t = performance.now();
      const r = (await invokeHttp(who === "down" ? complete!.socketPath : lite!.socketPath, completion(i))) as {
        json: { payload?: { engine?: string; reason?: string } };
      };
      samples[who].push(performance.now() - t);
      if (who === "down") engines.add(`${r.json.payload?.engine}/${r.json.payload?.reason}`);
    };
    for (let i = 0; i < 50; i++) {
      await one("down", i);
      await one("lite", i);
    }
    samples.down.length = 0;
    samples.lite.length = 0;
    for (let i = 0; i < n; i++) {
      for (const who of i % 2 === 0 ? (["down", "lite"] as const) : (["lite", "down"] as const)) await one(who, i);
      if ((i + 1) % 100 === 0) progress(`[remote-engine] engine down ${i + 1}/${n}`);
    }
    return { down: side(samples.down), lite: side(samples.lite), engines: [...engines] };
  } finally {
    process.env = saved;
    await complete?.stop();
    await lite?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
