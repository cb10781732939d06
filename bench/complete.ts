#!/usr/bin/env node
/**
 * `npm run bench:complete`: agent-complete's stage timings (p50/p95) on three real TypeScript files
 * (~200, ~2,000, ~8,000 lines), tokens/s with the tiny model at threads 1 and 2, load time, and the
 * KV-reuse speed-up on a repeated prefix. Writes bench/results/<YYYY-MM-DD>-complete.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createCompleteAgent } from "../agents/complete/agent.js";
import { modelConfig, type ModelConfig } from "../agents/lib/llm/config.js";
import { ModelHost } from "../agents/lib/llm/host.js";
import { LatestWins } from "../protocol/transport/latest.js";
import { AgentInvoker } from "../agents/lib/runtime/invoke.js";
import { bundledManifest } from "../agents/lib/runtime/manifest.js";
import { createLogger } from "../protocol/util/log.js";
import { percentileOf } from "../protocol/util/percentile.js";
import { DEFAULT_PRE_TOKENIZER, writeTinyGguf } from "../tools/tiny-gguf.js";

const ROOT = new URL("../..", import.meta.url).pathname;
// Enough samples per file for a steady p95: from a few dozen, one outlier moves it between runs.
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200);
const NON_MODEL = ["accept", "slice", "prompt", "budget", "syntax", "response"] as const;

/** Real sources from installed packages (pinned in package-lock.json); the 8,000-line file joins two of them. */
function files(): { name: string; lines: number; source: string }[] {
  const read = (p: string): string => readFileSync(join(ROOT, "node_modules", p), "utf8");
  const small = read("zod/src/v3/helpers/util.ts");
  const medium = read("zod/src/v4/mini/schemas.ts");
  const large = read("zod/src/v3/types.ts") + "\n" + read("zod/src/v4/classic/schemas.ts");
  return [
    { name: "zod/src/v3/helpers/util.ts", source: small },
    { name: "zod/src/v4/mini/schemas.ts", source: medium },
    { name: "zod/src/v3/types.ts + zod/src/v4/classic/schemas.ts", source: large },
  ].map((f) => ({ ...f, lines: f.source.split("\n").length }));
}

function pct(values: number[], p: number): number {
  return Math.round(percentileOf(values, p) * 1000) / 1000;
}

function median(values: number[]): number {
  return pct(values, 50);
}

/** Cursor lines inside function bodies (lines that start with two spaces of indentation and a statement). */
function cursorLines(source: string, n: number): number[] {
  const lines = source.split("\n");
  const candidates = lines
    .map((l, i) => [l, i + 1] as const)
    .filter(([l]) => /^ {2,}(const|let|return|if|for|throw) /.test(l))
    .map(([, i]) => i);
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(candidates[Math.floor((i * 7919) % candidates.length)]!);
  return out;
}

async function stageTimings(
  host: ModelHost,
  file: { name: string; source: string },
): Promise<Record<string, { p50: number; p95: number }>> {
  const log = createLogger({ agentName: "bench", destination: false });
  const def = createCompleteAgent(bundledManifest("complete", import.meta.url), host, new LatestWins());
  await def.warmup!(log);
  const invoker = new AgentInvoker(def, log);
  const lines = file.source.split("\n");
  const samples: Record<string, number[]> = {};
  const KEYSTROKES = 10;
  const targets = cursorLines(file.source, Math.ceil((ITERATIONS + 5) / KEYSTROKES));
  for (let i = 0; i < ITERATIONS + 5; i++) {
    // Keystrokes: the cursor stays on a line for 10 keystrokes, each adds a character to a trailing
    // comment there; earlier edits stay in the buffer (as in an editor), so each re-parse is incremental.
    const line = targets[Math.floor(i / KEYSTROKES)]!;
    lines[line - 1] = `${lines[line - 1]}${i % KEYSTROKES === 0 ? " // k" : "k"}`;
    const req = {
      action: "complete",
      context: {
        language: "typescript",
        file_path: "bench.ts",
        source_code: lines.join("\n"),
        cursor: { line, column: lines[line - 1]!.length },
      },
      constraints: { timeout_ms: 10_000, max_tokens: 8, best_effort: true, document_id: "bench" },
    };
    const res = await invoker.invoke(req);
    if (res.status !== "success") throw new Error(`bench request failed: ${JSON.stringify(res.error)}`);
    if (i < 5) continue; // warm-up
    const t = res.timings_ms ?? {};
    for (const [k, v] of Object.entries(t)) (samples[k] ??= []).push(v);
    (samples.non_model ??= []).push(NON_MODEL.reduce((n, k) => n + (t[k] ?? 0), 0));
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, { p50: pct(v, 50), p95: pct(v, 95) }]));
}

async function loaded(config: Partial<ModelConfig>): Promise<ModelHost> {
  const host = new ModelHost(modelConfig(config, {}));
  await host.load();
  if (!host.ready) throw new Error(`model did not load: ${JSON.stringify(host.state)}`);
  return host;
}

async function tokensPerSecond(host: ModelHost, runs: number, maxTokens: number): Promise<number> {
  const prompt = host.tokenize("export function add(a: number, b: number): number {\n  return a + b;\n}\n");
  const rates: number[] = [];
  for (let i = 0; i < runs; i++) {
    const g = await host.generate([...host.tokenize(`// run ${i}\n`), ...prompt], {
      maxTokens,
      temperature: 0,
      seed: 0,
      stop: [],
      signal: new AbortController().signal,
    });
    rates.push((g.tokens / g.ms) * 1000);
  }
  return Math.round(median(rates));
}

/** Time to first token for a ~1,500-token prompt: fresh sequence vs. the same prefix already in the KV cache. */
async function kvReuse(
  host: ModelHost,
): Promise<{ cold_ms: number; warm_ms: number; ratio: number; prompt_tokens: number; reused_tokens: number }> {
  const base = host.tokenize(
    readFileSync(join(ROOT, "node_modules/zod/src/v3/helpers/util.ts"), "utf8").slice(0, 1500),
  );
  const cold: number[] = [];
  const warm: number[] = [];
  let reused = 0;
  for (let i = 0; i < 7; i++) {
    const signal = new AbortController().signal;
    const a = await host.generate([...host.tokenize(`// ${i}\n`), ...base], {
      maxTokens: 1,
      temperature: 0,
      seed: 0,
      stop: [],
      signal,
    });
    const b = await host.generate([...host.tokenize(`// ${i}\n`), ...base, ...host.tokenize("\n// more")], {
      maxTokens: 1,
      temperature: 0,
      seed: 0,
      stop: [],
      signal,
    });
    cold.push(a.ms);
    warm.push(b.ms);
    reused = b.kvReused;
  }
  const c = median(cold);
  const w = median(warm);
  return {
    cold_ms: c,
    warm_ms: w,
    ratio: Math.round((c / w) * 10) / 10,
    prompt_tokens: base.length + 8,
    reused_tokens: reused,
  };
}

// The tiny model tokenises like Qwen2.5-Coder (pre-tokenizer "qwen2"); the 2,000-line file is also
// measured with llama.cpp's generic "default" pre-tokenizer (std::regex splitting, far slower a call).
const model = writeTinyGguf(join(ROOT, "node_modules/.cache/agency/tiny-fim-v3.gguf"), { fim: true });
const modelDefaultPre = writeTinyGguf(join(ROOT, "node_modules/.cache/agency/tiny-fim-default-pre-v3.gguf"), {
  fim: true,
  pre: "default",
});
const loads: number[] = [];
const modelLoads: number[] = [];
for (let i = 0; i < 3; i++) {
  const h = await loaded({ path: model, threads: 1, contextSize: 2048, sequences: 1 });
  loads.push(h.loadMs);
  modelLoads.push(h.modelLoadMs);
  await h.dispose();
}
const host = await loaded({ path: model, threads: 1, contextSize: 2048, sequences: 1 });
const stages: Record<string, unknown> = {};
for (const f of files()) {
  stages[`${f.lines} lines`] = { file: f.name, lines: f.lines, ...(await stageTimings(host, f)) };
  console.log(
    `${f.lines} lines: non-model p50/p95`,
    (stages[`${f.lines} lines`] as Record<string, { p50: number; p95: number }>).non_model,
  );
}
const medium = files()[1]!;
const byPre: Record<string, { p50: number; p95: number }> = {
  [DEFAULT_PRE_TOKENIZER]: (stages[`${medium.lines} lines`] as Record<string, { p50: number; p95: number }>).non_model!,
};
{
  const hostDefault = await loaded({ path: modelDefaultPre, threads: 1, contextSize: 2048, sequences: 1 });
  const t = await stageTimings(hostDefault, medium);
  byPre.default = t.non_model!;
  console.log(`${medium.lines} lines, "default" pre-tokenizer: non-model p50/p95`, t.non_model, "budget", t.budget);
  await hostDefault.dispose();
}
const tps1 = await tokensPerSecond(host, 5, 128);
const kv = await kvReuse(host);
await host.dispose();
const host2 = await loaded({ path: model, threads: 2, contextSize: 2048, sequences: 1 });
const tps2 = await tokensPerSecond(host2, 3, 32);
await host2.dispose();

const date = new Date().toISOString().slice(0, 10);
const result = {
  date,
  host: { cpus: (await import("node:os")).availableParallelism(), node: process.version },
  model: {
    file: `tiny GGUF (tools/tiny-gguf.ts, FIM, 1 layer, E=32, pre-tokenizer ${DEFAULT_PRE_TOKENIZER})`,
    load_ms_median: Math.round(median(loads) * 10) / 10,
    model_file_load_ms_median: Math.round(median(modelLoads) * 10) / 10,
  },
  load_average_during_run: (await import("node:os")).loadavg().map((x) => Math.round(x * 100) / 100),
  iterations: ITERATIONS,
  stages_ms: stages,
  non_model_ms_by_pre_tokenizer: { file: medium.name, lines: medium.lines, ...byPre },
  tokens_per_s: { threads_1: tps1, threads_2: tps2 },
  kv_reuse: kv,
};
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
const out = join(ROOT, `bench/results/${date}-complete.json`);
writeFileSync(out, JSON.stringify(result, null, 2) + "\n");
console.log(JSON.stringify({ tokens_per_s: result.tokens_per_s, kv_reuse: kv, model: result.model }));
console.log(`wrote ${out}`);
process.exit(0);
