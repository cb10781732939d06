/** Loading an agent's checked-in manifest, validated against the one schema. */
import { readManifestFile } from "../../../protocol/contract/manifest.js";
import type { AgentManifest } from "../../../protocol/contract/schemas.js";

/** The package root, from any compiled file under dist/ (dist/<dir>/…/file.js). */
export function packageRoot(fromUrl: string): URL {
  const url = new URL(fromUrl);
  const idx = url.pathname.lastIndexOf("/dist/");
  if (idx === -1) throw new Error(`Expected to run from dist/, got ${url.pathname}`);
  return new URL(`file://${url.pathname.slice(0, idx + 1)}`);
}

/** The checked-in manifest `manifests/<name>.json` of a bundled agent. */
export function bundledManifest(name: string, fromUrl: string): AgentManifest {
  return readManifestFile(new URL(`manifests/${name}.json`, packageRoot(fromUrl)));
}
