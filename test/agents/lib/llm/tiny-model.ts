/** The tiny test models, generated (never downloaded) into node_modules/.cache/agency/ once per content version. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { writeTinyGguf } from "../../../../tools/tiny-gguf.js";
import { ROOT } from "../../../helpers.js";

const CACHE = join(ROOT, "node_modules/.cache/agency");
/** Bump when the generator's output changes. */
const VERSION = 3;

/** Path of the tiny model with FIM tokens (`fim: true`) or without. */
export function tinyModel(fim = true): string {
  const path = join(CACHE, `tiny-${fim ? "fim" : "plain"}-v${VERSION}.gguf`);
  if (!existsSync(path)) writeTinyGguf(path, { fim });
  return path;
}

export const COMPLETE = join(ROOT, "dist/agents/complete/main.js");
export const COMPLETE_LITE = join(ROOT, "dist/agents/complete-lite/main.js");

/** Environment for an agent process using the tiny model: one thread (2 shared cores), small windows. */
export function modelEnv(fim = true, extra: Record<string, string> = {}): Record<string, string> {
  return {
    AIP_MODEL: tinyModel(fim),
    AIP_MODEL_THREADS: "1",
    AIP_MODEL_CONTEXT: "1024",
    AIP_MODEL_SEQUENCES: "2",
    ...extra,
  };
}
