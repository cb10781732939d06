/**
 * Turns an agent definition into an executable: one-shot (stdin → stdout), `--listen PATH`, `--manifest`.
 * Each mode's module loads only when that mode runs: `--help` needs neither, a one-shot run (the
 * conformance kit and vetting start many) not the socket server and its framings, a server not the
 * one-shot path.
 */
import { EnvError, checkEnv } from "../../../protocol/util/env.js";
import { manifestText, wantsManifest } from "./entry.js";
import type { AgentDefinition, DeferredAgent } from "./types.js";

function usage(def: AgentDefinition): string {
  const name = def.manifest.name;
  return `Usage: agent-${name} [--manifest | --listen PATH [--group GROUP] | --help]

${(def.help ?? def.manifest.description).trim()}

  (no flags)      one-shot: read one JSON request from stdin, write one response to stdout
  --manifest      print this agent's AGENT_MANIFEST.json
  --listen PATH   serve AIP-1 (HTTP/1.1 and NDJSON) on the Unix socket PATH
  --group GROUP   with --listen: make the socket 0660 for GROUP (default 0600)

Environment: AIP_LOG_FILE (log file; one-shot mode is silent without it), AIP_LOG_LEVEL (info)
`;
}

/**
 * Entry point of every agent executable. Resolves when the agent should exit. A deferred agent (a bundled
 * one's entry, entry.ts) is loaded when the mode needs more than its manifest, and its loader is told
 * whether the run is one-shot: this function alone decides that.
 */
export async function runAgent(agent: AgentDefinition | DeferredAgent, argv = process.argv.slice(2)): Promise<void> {
  const def = async (): Promise<AgentDefinition> => ("load" in agent ? agent.load({ oneShot: false }) : agent);
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(usage(await def()));
    return;
  }
  if (wantsManifest(argv)) {
    process.stdout.write(manifestText((await def()).manifest));
    return;
  }
  try {
    checkEnv(process.env, ["agents"]);
  } catch (err) {
    if (err instanceof EnvError) return usageError(await def(), err.message);
    throw err;
  }
  if (argv[0] === "--listen") {
    const path = argv[1];
    const groupIdx = argv.indexOf("--group");
    const group = groupIdx > 0 ? argv[groupIdx + 1] : undefined;
    if (!path || path.startsWith("--") || (groupIdx > 0 && !group) || argv.length !== (groupIdx > 0 ? 4 : 2)) {
      return usageError(await def(), "--listen needs a socket path (and --group a group name)");
    }
    const [{ listen }, loaded] = await Promise.all([import("./serve.js"), def()]);
    await listen(loaded, path, group);
    return;
  }
  if (argv.length > 0) return usageError(await def(), `unknown argument ${JSON.stringify(argv[0])}`);
  await (await import("./one-shot.js")).oneShot(agent);
}

function usageError(def: AgentDefinition, message: string): void {
  process.stderr.write(`agent-${def.manifest.name}: ${message}\n\n${usage(def)}`);
  process.exitCode = 2;
}
