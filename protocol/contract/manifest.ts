/** Reading an AGENT_MANIFEST.json file, validated against the one schema; errors list each path. */
import { readFileSync } from "node:fs";
import { ManifestSchema, formatIssues, type AgentManifest } from "./schemas.js";

/** Validate a decoded manifest; throws an Error listing `path: reason` for each problem. */
export function parseManifest(raw: unknown, source: string): AgentManifest {
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      `Invalid manifest ${source}:\n${formatIssues(parsed.error)
        .map((e) => `  ${e.path}: ${e.message}`)
        .join("\n")}`,
    );
  }
  return parsed.data;
}

export function readManifestFile(path: string | URL): AgentManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`Cannot read manifest ${String(path)}: ${(err as Error).message}`);
  }
  return parseManifest(raw, String(path));
}
