/** agent-dummy: the reference agent. Answers `echo` with the action, the source line count and the trace id. */
import { actionInput } from "../../protocol/contract/actions.js";
import { bundledManifest } from "../lib/runtime/manifest.js";
import type { AgentDefinition } from "../lib/runtime/types.js";

/** Optional test hook: `constraints.delay_ms` makes the echo wait (bounded by the deadline). */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}

/** `text.split("\n").length`, without making the array of lines. */
function lineCount(text: string): number {
  let n = 1;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) n++;
  return n;
}

export const dummy: AgentDefinition = {
  manifest: bundledManifest("dummy", import.meta.url),
  help: `Answers the action "echo" with {received_action, context_lines, trace_id}; constraints.delay_ms
(at most 60 s) makes it wait first. For smoke tests, the conformance kit and benchmarks.`,
  handlers: {
    echo: async (request, ctx) => {
      const source = request.context.source_code;
      const delayMs = actionInput("echo", request).constraints.delay_ms;
      if (delayMs !== undefined && delayMs > 0) await delay(Math.min(delayMs, 60_000), ctx.signal);
      return {
        received_action: request.action,
        context_lines: typeof source === "string" && source.length > 0 ? lineCount(source) : 0,
        trace_id: ctx.traceId,
      };
    },
  },
};
