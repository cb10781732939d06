/**
 * Agent benchmarks that live in their own scripts (`npm run bench:code`, `npm run bench:complete`):
 * run each as a child process and fold its results file into the report.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ScenarioBody } from "../lib/scenario.js";

const DIST_BENCH = join(import.meta.dirname, "..");
const RESULTS = join(import.meta.dirname, "../../../bench/results");

/** `name` is the scenario's; `resultName` the script's own results file (`<date>-<resultName>.json`). */
function scriptScenario(name: string, resultName: string, script: string, keys: string[]): ScenarioBody {
  return {
    async run(ctx) {
      ctx.progress(`${name}: running ${script}`);
      const started = new Date();
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, [join(DIST_BENCH, script)], { stdio: ["ignore", "pipe", "inherit"] });
        child.stdout.resume();
        child.on("exit", resolve);
      });
      if (code !== 0) throw new Error(`${script} exited with ${code}`);
      const file = join(RESULTS, `${started.toISOString().slice(0, 10)}-${resultName}.json`);
      const results = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
      const summary = Object.fromEntries(keys.map((k) => [k, results[k]]));
      return {
        parameters: { script, results_file: file },
        results: summary,
        markdown: `Measured by \`${script}\` (full results: \`bench/results/${started.toISOString().slice(0, 10)}-${resultName}.json\`).\n\n\`\`\`json\n${JSON.stringify(summary, null, 2)}\n\`\`\``,
      };
    },
  };
}

export const codeAgents = scriptScenario("agents-code", "code-agents", "code-agents.js", [
  "slice",
  "complete_lite_2000_lines",
  "search_5000_files",
  "agents_on_this_repo",
]);

export const completion = scriptScenario("agents-complete", "complete", "complete.js", [
  "stages_ms",
  "tokens_per_s",
  "kv_reuse",
]);
