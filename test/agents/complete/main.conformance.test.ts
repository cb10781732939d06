import { runConformance, type CheckResult, type Sample } from "../../../tools/conformance/kit.js";
import { conformanceSuite } from "../../conformance.js";
import { withEnv } from "../../helpers.js";
import { COMPLETE, modelEnv } from "../lib/llm/tiny-model.js";

const SOURCE = "export const alpha = 1;\n// note: ";

/** Run the kit with `env` in this process's environment (the agent processes inherit it). */
function conformance(env: Record<string, string | undefined>, sample: Sample): Promise<CheckResult[]> {
  return withEnv(env, () => runConformance(COMPLETE, undefined, sample));
}

conformanceSuite("agent-complete conformance with the tiny model", () =>
  conformance(
    { ...modelEnv(true, { AIP_MODEL_SEQUENCES: "1", AIP_WARMUP_KEYSTROKES: "0" }) },
    {
      context: { language: "typescript", source_code: SOURCE, cursor: { line: 2, column: 9 } },
      constraints: { max_tokens: 4, best_effort: true, timeout_ms: 30_000, inference_timeout_ms: 20_000 },
    },
  ),
);
conformanceSuite("agent-complete conformance without a model", () =>
  conformance(
    { AIP_MODEL: undefined },
    { context: { language: "typescript", source_code: "const alpha = 1;\nal" }, constraints: { fallback: "lite" } },
  ),
);
