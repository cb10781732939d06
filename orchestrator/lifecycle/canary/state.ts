/**
 * Canary state on disk: written atomically (temp file + rename) under the state directory, so an
 * orchestrator restart keeps versions, percent and the windows the decisions need. A corrupt file
 * is reported and replaced by the safe default: stable only, no canary.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { ManifestSchema } from "../../../protocol/contract/schemas.js";
import { writeFileAtomic } from "../../core/state-file.js";

const SampleSchema = z.object({ t: z.number(), ms: z.number(), err: z.boolean() });

/** A running version. Its command and env are never stored: they come from the config's declared versions. */
export const DeploymentSchema = z.object({
  version: z.string(),
  manifest: ManifestSchema,
});
export type Deployment = z.infer<typeof DeploymentSchema>;

export const DecisionRecordSchema = z.object({
  at: z.string(),
  action: z.enum(["start", "step", "promote", "rollback", "hold", "retire", "reset"]),
  reason: z.string(),
  percent: z.number(),
  automatic: z.boolean(),
});
export type DecisionRecord = z.infer<typeof DecisionRecordSchema>;

export const AgentCanaryStateSchema = z.object({
  /** After a promotion: the version now stable (overrides the config's agent). */
  stable: DeploymentSchema.nullable().default(null),
  canary: DeploymentSchema.extend({ percent: z.number().min(0).max(100), started_at: z.string() })
    .nullable()
    .default(null),
  /** The previous stable, kept running out of rotation until `until` (instant rollback). */
  retained: DeploymentSchema.extend({ until: z.string() }).nullable().default(null),
  /** Actions taken (start, step, promote, rollback, retire), newest last. */
  decisions: z.array(DecisionRecordSchema).default([]),
  /** The latest periodic verdict, including "hold" (waiting for data, or for a manual promotion). */
  last_evaluation: DecisionRecordSchema.nullable().default(null),
  windows: z
    .object({ stable: z.array(SampleSchema).default([]), canary: z.array(SampleSchema).default([]) })
    .default({ stable: [], canary: [] }),
});
export type AgentCanaryState = z.infer<typeof AgentCanaryStateSchema>;

export const CanaryFileSchema = z.object({
  version: z.literal(1),
  agents: z.record(z.string(), AgentCanaryStateSchema),
});
export type CanaryFile = z.infer<typeof CanaryFileSchema>;

export const emptyState = (): CanaryFile => ({ version: 1, agents: {} });

export function statePath(stateDir: string): string {
  return join(stateDir, "canary.json");
}

/** Read the state; a missing file is the empty state, a corrupt one is reported through `onCorrupt`. */
export function loadState(path: string, onCorrupt: (reason: string) => void): CanaryFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") onCorrupt(`cannot read ${path}: ${(err as Error).message}`);
    return emptyState();
  }
  try {
    const parsed = CanaryFileSchema.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
    onCorrupt(
      `${path} does not match the canary state schema: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  } catch (err) {
    onCorrupt(`${path} is not valid JSON: ${(err as Error).message}`);
  }
  return emptyState();
}

/** Write atomically: a crash mid-write leaves the old file or the new one, never half of one. */
export function saveState(path: string, state: CanaryFile): void {
  writeFileAtomic(path, JSON.stringify(state, null, 2) + "\n");
}
