/** The complete agent's definition: warm-up (parser, tokenizer, prettier, model + FIM self-probe), health, dispose. */
import type { AgentManifest } from "../../protocol/schemas.js";
import { ParseCache } from "../code/cache.js";
import { dialectOf } from "../code/language.js";
import { TokenCounter } from "../llm/budget.js";
import type { ModelHost } from "../llm/host.js";
import type { LatestWins } from "../llm/latest.js";
import { memoryFor } from "../llm/memory.js";
import type { AgentDefinition } from "../runtime/types.js";
import { createCompleteLite } from "../complete-lite/handler.js";
import { formatChecked, syntaxError } from "./check.js";
import { createComplete } from "./handler.js";

const WARM_SOURCE = "export function add(a: number, b: number): number {\n  return a + b;\n}\n";

export function createCompleteAgent(manifest: AgentManifest, host: ModelHost, latest: LatestWins): AgentDefinition {
  const cache = new ParseCache();
  let counter: TokenCounter | undefined;
  const resources = { ...manifest.resources, ...(host.config.path !== undefined ? { memory: memoryFor(host.config.path, host.config) ?? manifest.resources.memory } : {}) };
  return {
    manifest: { ...manifest, resources },
    handlers: { complete: createComplete({ host, latest, cache, lite: createCompleteLite(cache), counter: () => (counter ??= new TokenCounter()) }) },
    warmup: async (log) => {
      cache.get(WARM_SOURCE, dialectOf("typescript"), "\0warmup");
      await formatChecked(WARM_SOURCE, dialectOf("typescript"));
      syntaxError(WARM_SOURCE, dialectOf("typescript"));
      await host.load(log);
      counter = new TokenCounter(host.ready ? (t) => host.tokenize(t) : undefined);
      await host.selfProbe();
      log.info({ event: "warmup", model_state: host.state.status, fim_ok: host.fim.ok ?? false, tiktoken_ratio: counter.ratio }, "warm");
    },
    health: () => {
      const base = { ...host.health(), superseded: latest.superseded };
      if (host.state.status === "none" || host.state.status === "failed") return { status: "degraded", reason: host.state.reason, fim_ok: false, ...base };
      return base;
    },
    dispose: () => host.dispose(),
  };
}
