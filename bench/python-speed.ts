/**
 * summarize's latency on a 2,000-line Python module (the first 2,000 lines of toolz's itertoolz.py and
 * functoolz.py, a real library's code), through the handler in-process as the agent runs it, warm
 * (the grammar loaded). Prints p50/p95 in ms. `node dist/bench/python-speed.js`
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AipRequest } from "../protocol/contract/schemas.js";
import { ParseCache } from "../agents/lib/code/cache.js";
import { standaloneContext } from "../agents/lib/runtime/context.js";
import { createLogger } from "../protocol/util/log.js";
import { createSummarize } from "../agents/summarize/handler.js";

const TOOLZ = join(new URL(".", import.meta.url).pathname, "../../../shared/corpus/python/toolz/toolz");
const RUNS = Number(process.env.RUNS ?? 60);

export async function pythonSummarizeSpeed(): Promise<{ lines: number; runs: number; p50_ms: number; p95_ms: number }> {
  const text = ["itertoolz.py", "functoolz.py"]
    .map((f) => readFileSync(join(TOOLZ, f), "utf8"))
    .join("\n")
    .split("\n")
    .slice(0, 2000)
    .join("\n");
  const summarize = createSummarize(new ParseCache());
  const log = createLogger({ agentName: "bench", destination: false });
  const ms: number[] = [];
  for (let i = 0; i < RUNS + 5; i++) {
    // a different buffer each time (a keystroke's edit), so no cache answers it
    const source = `${text}\n# edit ${i}\n`;
    const t0 = performance.now();
    await summarize(
      {
        action: "summarize",
        context: { source_code: source, file_path: "mod.py" },
        constraints: {},
      } as unknown as AipRequest,
      standaloneContext({ traceId: "bench", budgetMs: 10_000, log }),
    );
    if (i >= 5) ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { lines: 2000, runs: RUNS, p50_ms: ms[Math.floor(ms.length / 2)]!, p95_ms: ms[Math.floor(ms.length * 0.95)]! };
}

if (process.argv[1]?.endsWith("python-speed.js")) console.log(JSON.stringify(await pythonSummarizeSpeed()));
