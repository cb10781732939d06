import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKS, runConformance, type CheckResult, type Sample } from "../../scripts/conformance/kit.js";
import { COMPLETE, modelEnv } from "./llm/tiny-model.js";

const SOURCE = "export const alpha = 1;\n// note: ";

/** Run the kit with `env` in this process's environment (the agent processes inherit it). */
async function conformance(env: Record<string, string | undefined>, sample: Sample): Promise<CheckResult[]> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const set = (e: Record<string, string | undefined>): void => {
    for (const [k, v] of Object.entries(e)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(env);
  try {
    return await runConformance(COMPLETE, undefined, sample);
  } finally {
    set(saved);
  }
}

for (const variant of ["with the tiny model", "without a model"] as const) {
  describe(`agent-complete conformance ${variant}`, () => {
    let results: CheckResult[] = [];
    beforeAll(async () => {
      results =
        variant === "with the tiny model"
          ? await conformance({ ...modelEnv(true), AIP_MODEL_SEQUENCES: "1" }, { context: { language: "typescript", source_code: SOURCE, cursor: { line: 2, column: 9 } }, constraints: { max_tokens: 4, best_effort: true, timeout_ms: 10_000 } })
          : await conformance({ AIP_MODEL: undefined }, { context: { language: "typescript", source_code: "const alpha = 1;\nal" }, constraints: { fallback: "lite" } });
    }, 240_000);
    afterAll(() => undefined);

    it("ran every check", () => {
      expect(results.length).toBeGreaterThanOrEqual(CHECKS.length);
    });
    for (const check of CHECKS) {
      it(check.name, () => {
        const r = results.find((x) => x.name === check.name);
        expect(r, "check did not run").toBeDefined();
        expect(r!.reason ?? "").toBe("");
        expect(r!.ok).toBe(true);
      });
    }
  });
}
