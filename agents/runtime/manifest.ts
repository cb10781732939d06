/** Loading an agent's checked-in manifest, validated against the one schema. */
import { readFileSync } from "node:fs";
import { ManifestSchema, formatIssues, type AgentManifest } from "../../protocol/schemas.js";

/** Read and validate a manifest file; throws with each schema error's path. */
export function loadManifest(path: string | URL): AgentManifest {
  const raw = JSON.parse(readFileSync(path, "utf8")) as unknown;
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = formatIssues(parsed.error).map((e) => `  ${e.path}: ${e.message}`);
    throw new Error(`Invalid manifest ${String(path)}:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/** The package root, from any compiled file under dist/ (dist/<dir>/…/file.js). */
export function packageRoot(fromUrl: string): URL {
  const url = new URL(fromUrl);
  const idx = url.pathname.lastIndexOf("/dist/");
  if (idx === -1) throw new Error(`Expected to run from dist/, got ${url.pathname}`);
  return new URL(`file://${url.pathname.slice(0, idx + 1)}`);
}

/** The checked-in manifest `manifests/<name>.json` of a bundled agent. */
export function bundledManifest(name: string, fromUrl: string): AgentManifest {
  return loadManifest(new URL(`manifests/${name}.json`, packageRoot(fromUrl)));
}
