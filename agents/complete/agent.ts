/** The complete agent's definition: warm-up (parser, tokenizer, prettier, model + FIM self-probe), health, dispose. */
import type { AgentManifest } from "../../protocol/contract/schemas.js";
import { ParseCache } from "../lib/code/cache.js";
import { dialectOf } from "../lib/code/language.js";
import { warmParser } from "../lib/code/parse.js";
import { TokenCounter } from "../lib/llm/budget.js";
import type { ModelEngine } from "../lib/llm/engine.js";
import { LatestWins } from "../../protocol/transport/latest.js";
import { memoryFor } from "../lib/llm/memory.js";
import type { AgentDefinition } from "../lib/runtime/types.js";
import { TypedEngine } from "../lib/completion/engine.js";
import { createCompleteLite } from "../lib/completion/handler.js";
import { formatChecked, syntaxError } from "./check.js";
import { standaloneContext } from "../lib/runtime/context.js";
import { createComplete } from "./handler.js";
import { Prewarm } from "./prewarm.js";
import { WARM_MODULE, warmLines } from "./warm-module.js";

const WARM_SOURCE = "export function add(a: number, b: number): number {\n  return a + b;\n}\n";

/** Keystrokes the warm-up types through the whole pipeline (one generated token each), each at another line of WARM_MODULE. */
const FULL_KEYSTROKES = 6;
/** Dry keystrokes per cursor position (typing a comment there), as in an editor. */
const PER_POSITION = 10;
/** The dry keystrokes' buffer: WARM_MODULE this many times. */
const WARM_COPIES = 16;

export interface CompleteAgentOptions {
  /**
   * The run answers one request and exits: the warm-up loads what that request needs (model, FIM probe,
   * parser) but types no keystrokes, since compiling the hot paths pays off only over later requests.
   */
  oneShot?: boolean;
}

export function createCompleteAgent(
  manifest: AgentManifest,
  host: ModelEngine,
  latest: LatestWins,
  options: CompleteAgentOptions = {},
): AgentDefinition {
  const warmupKeystrokes = options.oneShot ? 0 : host.config.warmupKeystrokes;
  const cache = new ParseCache();
  let counter: TokenCounter | undefined;
  const tokenCounter = (): TokenCounter => (counter ??= new TokenCounter());
  const prewarm = new Prewarm(host, tokenCounter);
  // One checker for both engines: the prompt's typed context and the lite fallback's typed answers.
  const typed = new TypedEngine();
  const deps = { host, latest, cache, lite: createCompleteLite(cache, typed), counter: tokenCounter, prewarm, typed };
  const complete = createComplete(deps);
  // The warm-up's dry keystrokes: every stage but the model, which "completes" with a canned text.
  const dry = createComplete({
    ...deps,
    latest: new LatestWins(),
    generate: async (prompt) => ({
      text: "m",
      tokens: 1,
      kvReused: 0,
      promptTokens: prompt.length,
      stopReason: "maxTokens",
      sequence: -1,
      ms: 0,
    }),
  });
  let warmupMs = 0;
  /** The parser, the syntax check and prettier, each run once on a small module. */
  const warmSyntax = async (): Promise<void> => {
    cache.get(WARM_SOURCE, dialectOf("typescript"), "\0warmup");
    await formatChecked(WARM_SOURCE, dialectOf("typescript"));
    syntaxError(WARM_SOURCE, dialectOf("typescript"));
  };
  const resources = {
    ...manifest.resources,
    ...(host.config.path !== undefined
      ? { memory: memoryFor(host.config.path, host.config) ?? manifest.resources.memory }
      : {}),
  };
  return {
    manifest: { ...manifest, resources },
    help: `Answers the action "complete" with a local GGUF model (fill-in-the-middle when the model has FIM
tokens), after the same parsing, symbol context and syntax check as complete-lite; without a model it
reports itself degraded and answers from the syntactic engine (payload.engine "lite").
Request: context.source_code and context.cursor; constraints.max_tokens, constraints.document_id
(latest wins) optional.
Environment: AIP_MODEL (path to a .gguf file), AIP_MODEL_THREADS, AIP_MODEL_CONTEXT,
AIP_MODEL_GPU_LAYERS, AIP_MODEL_SEQUENCES, AIP_WARMUP_KEYSTROKES; or an inference server:
AIP_MODEL_URL, AIP_MODEL_NAME, AIP_MODEL_KEY_FILE, AIP_MODEL_FIM, AIP_MODEL_TIMEOUT_MS (docs/operations.md).
A completion that fails the syntax check, or an inference server that fails, is answered by the
syntactic engine with payload.engine "lite" and payload.reason.
See docs/agents.md.`,
    handlers: { complete },
    warmup: async (log) => {
      await host.load(log);
      // With a model the whole pipeline is warmed before ready; without one complete-lite answers in
      // its place, so the parser loads just before listening (preload), prettier warms after ready
      // (warmLater) and the counter's encoder (a large table to load), which only a model's prompt
      // needs, is not loaded.
      if (host.ready) {
        await warmSyntax();
        counter = new TokenCounter((t) => host.tokenize(t));
      }
      await host.selfProbe();
      if (host.ready && !options.oneShot) {
        // The whole pipeline, a few keystrokes with one generated token each: parser, incremental
        // re-parse, symbols, tokenizers and prettier are compiled (JIT) before the first real request.
        const one = WARM_MODULE.split("\n");
        const lines0 = warmLines();
        const keystroke = async (
          handler: typeof complete,
          lines: string[],
          k: number,
          line: number,
          first: boolean,
        ): Promise<void> => {
          lines[line - 1] += first ? " // warm" : "m";
          const request = {
            action: "complete",
            context: {
              language: "typescript",
              file_path: "\0warmup.ts",
              source_code: lines.join("\n"),
              cursor: { line, column: lines[line - 1]!.length },
            },
            constraints: { max_tokens: 1, best_effort: true },
          };
          const ctx = standaloneContext({
            traceId: `warmup-${k}`,
            budgetMs: 30_000,
            log,
            signal: AbortSignal.timeout(30_000),
          });
          await handler(request as Parameters<typeof complete>[0], ctx).catch((err: unknown) =>
            log.warn({ event: "warmup_request_failed", err: (err as Error).message }, "warm-up request failed"),
          );
        };
        const small = [...one];
        for (let k = 0; k < FULL_KEYSTROKES; k++) await keystroke(complete, small, k, lines0[k]!, true);
        // Then the non-model stages alone, many times (a canned completion instead of the model: a real
        // model would make this take minutes), until V8 has optimised their hot paths.
        const started = performance.now();
        // They type into the module repeated to a ~2,200-line buffer, jumping between its copies: the
        // buffer size the budgets are set for (incremental re-parse, symbols, trimming, chunks), which warms
        // the paths a large file takes that the module alone would not (docs/performance.md).
        const big = Array.from({ length: WARM_COPIES }, () => one).flat();
        const positions = lines0
          .flatMap((l) => Array.from({ length: WARM_COPIES }, (_, c) => l + c * one.length))
          .sort((a, b) => ((a * 7919) % 1009) - ((b * 7919) % 1009) || a - b);
        for (let k = 0; k < warmupKeystrokes; k++) {
          const at = Math.floor(k / PER_POSITION);
          await keystroke(dry, big, FULL_KEYSTROKES + k, positions[at % positions.length]!, k % PER_POSITION === 0);
        }
        // Prettier most of all (the largest part of the syntax stage): in a tight loop it is optimised
        // further than interleaved with the other stages, and the pipeline's calls then run at that speed.
        for (let k = 0; k < warmupKeystrokes; k++)
          await formatChecked(
            `function f() {\n  const v${k} = a?.b ?? { c: [1, 2], ...d }; // ${k}\n}\n`,
            dialectOf("typescript"),
          );
        warmupMs = Math.round(performance.now() - started);
      }
      log.info(
        {
          event: "warmup",
          model_state: host.state.status,
          fim_ok: host.fim.ok ?? false,
          tiktoken_ratio: counter?.ratio ?? null,
          warmup_keystrokes: warmupKeystrokes,
          warmup_ms: warmupMs,
        },
        "warm",
      );
    },
    preload: warmParser,
    warmLater: () => {
      if (!host.ready) void warmSyntax();
    },
    health: () => {
      const base = {
        ...host.health(),
        superseded: latest.superseded,
        warmup: { keystrokes: warmupKeystrokes, ms: warmupMs },
        prewarm: { ...prewarm.stats },
        ...typed.health(),
      };
      if (host.state.status === "none" || host.state.status === "failed")
        return { status: "degraded", reason: host.state.reason, fim_ok: false, ...base };
      return base;
    },
    dispose: async () => {
      prewarm.stop();
      await typed.close();
      return host.dispose();
    },
  };
}
