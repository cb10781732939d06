/** Registration: the checked-in manifest, compared with what the agent itself prints (`--manifest`). */
import { execa } from "execa";
import { isDeepStrictEqual } from "node:util";
import { readManifestFile } from "../protocol/manifest.js";
import type { AgentManifest } from "../protocol/schemas.js";
import type { AgentConfig } from "./config.js";

/** Keys whose values differ between two manifests (top level, and resources.* one level down). */
export function manifestDiff(checkedIn: Record<string, unknown>, printed: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(checkedIn), ...Object.keys(printed)])].sort();
  const out: string[] = [];
  for (const k of keys) {
    const a = checkedIn[k];
    const b = printed[k];
    if (isDeepStrictEqual(a, b)) continue;
    if (typeof a === "object" && a !== null && typeof b === "object" && b !== null && !Array.isArray(a)) {
      out.push(...manifestDiff(a as Record<string, unknown>, b as Record<string, unknown>).map((s) => `${k}.${s}`));
    } else {
      out.push(`${k}: checked-in ${JSON.stringify(a)}, agent prints ${JSON.stringify(b)}`);
    }
  }
  return out;
}

export interface Registration {
  manifest: AgentManifest;
  /** Differences between the checked-in manifest and `--manifest`; empty when they agree. */
  mismatch: string[];
}

/** Run `command --manifest`; resolves with the decoded output, or rejects saying what went wrong. */
export async function printedManifest(command: string[], env: Record<string, string>, timeoutMs = 10_000): Promise<unknown> {
  const [cmd, ...args] = command;
  const run = await execa(cmd!, [...args, "--manifest"], { reject: false, timeout: timeoutMs, env: { ...process.env, ...env }, stdin: "ignore" });
  if (run.exitCode !== 0 || run.failed) {
    throw new Error(`--manifest failed: ${run.timedOut ? `no answer within ${timeoutMs} ms` : `exit ${run.exitCode ?? run.signal}`} ${String(run.stderr).slice(0, 200)}`.trim());
  }
  try {
    return JSON.parse(String(run.stdout));
  } catch {
    throw new Error("--manifest printed something that is not JSON");
  }
}

/** Load the checked-in manifest and compare it with the agent's own `--manifest` output. */
export async function register(agent: AgentConfig, timeoutMs = 10_000): Promise<Registration> {
  const manifest = readManifestFile(agent.manifestPath);
  if (manifest.name !== agent.name) {
    throw new Error(`Agent "${agent.name}": its manifest ${agent.manifestPath} is for "${manifest.name}"`);
  }
  let printed: unknown;
  try {
    printed = await printedManifest(agent.command, agent.env, timeoutMs);
  } catch (err) {
    return { manifest, mismatch: [(err as Error).message] };
  }
  return { manifest, mismatch: manifestDiff(manifest as unknown as Record<string, unknown>, printed as Record<string, unknown>) };
}
