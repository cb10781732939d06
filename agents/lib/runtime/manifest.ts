/** Loading an agent's checked-in manifest, validated against the one schema. */
import { readManifestFile } from "../../../protocol/contract/manifest.js";
import type { AgentManifest } from "../../../protocol/contract/schemas.js";
import { bundledManifestUrl } from "./entry.js";

/** The checked-in manifest `manifests/<name>.json` of a bundled agent. */
export function bundledManifest(name: string, fromUrl: string): AgentManifest {
  return readManifestFile(bundledManifestUrl(name, fromUrl));
}
