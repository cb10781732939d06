/**
 * The first module an agent executable loads. `--manifest` (run by the orchestrator before every start) is
 * answered from the checked-in file before the agent's own modules (parsers, model engine, schema) load;
 * any other run goes to runAgent as a deferred agent, and runAgent, which decides the mode, loads the
 * definition when the mode needs it and tells the loader which mode it is.
 */
import { readFileSync } from "node:fs";
import type { AgentDefinition, LoadContext } from "./types.js";

/** The package root, from any compiled file under dist/ (dist/<dir>/…/file.js). */
export function packageRoot(fromUrl: string): URL {
  const url = new URL(fromUrl);
  const idx = url.pathname.lastIndexOf("/dist/");
  if (idx === -1) throw new Error(`Expected to run from dist/, got ${url.pathname}`);
  return new URL(`file://${url.pathname.slice(0, idx + 1)}`);
}

/** Where the checked-in manifest `manifests/<name>.json` of a bundled agent lies. */
export function bundledManifestUrl(name: string, fromUrl: string): URL {
  return new URL(`manifests/${name}.json`, packageRoot(fromUrl));
}

/** Whether the command line asks for the manifest alone. */
export function wantsManifest(argv: readonly string[]): boolean {
  return argv.length === 1 && argv[0] === "--manifest";
}

/** What `--manifest` prints: the manifest as JSON, two-space indent, one trailing newline. */
export function manifestText(manifest: unknown): string {
  return JSON.stringify(manifest, null, 2) + "\n";
}

/**
 * Entry point of a bundled agent's executable. The orchestrator validates what `--manifest` prints, and the
 * definition's manifest is the same file validated at load, so the output is the same either way.
 */
export async function agentEntry(
  name: string,
  fromUrl: string,
  load: (context: LoadContext) => Promise<AgentDefinition>,
  argv = process.argv.slice(2),
): Promise<void> {
  if (wantsManifest(argv)) {
    process.stdout.write(manifestText(JSON.parse(readFileSync(bundledManifestUrl(name, fromUrl), "utf8"))));
    return;
  }
  const { runAgent } = await import("./run.js");
  await runAgent({ name, load }, argv);
}
