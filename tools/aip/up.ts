/** `aip up`: run the agency (orchestrator + supervised agents) until SIGTERM/SIGINT. */
import { relative } from "node:path";
import { ConfigError, loadConfig } from "../../orchestrator/core/config.js";
import { startAgency } from "../../orchestrator/entry.js";
import { envString } from "../../protocol/util/env.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";

export const up: Command = {
  usage: `Usage: aip up [--config FILE] [--socket PATH] [--mode embedded|systemd] [--health-port N] [--log FILE]

Starts the orchestrator on its Unix socket. In embedded mode (default) it starts and
supervises every enabled agent in the config; in systemd mode it connects to the
agents' sockets. Prints the socket path and a curl line once ready.

  --config FILE      agency config (default: $AIP_CONFIG or manifests/agency.json)
  --socket PATH      orchestrator socket (default from config: ./run/aip.sock; env AIP_SOCKET)
  --mode MODE        embedded or systemd (env AIP_MODE)
  --health-port N    also serve the probes (GET /livez, /readyz, /healthz, /metrics) on 127.0.0.1:N (env AIP_HEALTH_PORT)
  --log FILE         write JSON Lines logs to FILE instead of stdout (env AIP_LOG_FILE)

The admin API (canary control, forced health checks) is served on a separate owner-only
socket (config admin_socket, default <socket>.admin.sock; env AIP_ADMIN_SOCKET).
A second orchestrator on the same agent socket directory exits 1 at once.

Signals: SIGTERM/SIGINT stop everything (no orphan process, no socket file left);
SIGUSR1 health-checks every agent now, restarts any that does not answer and starts failed ones again.`,
  async run(argv) {
    const { flags, positionals } = parseArgs(argv, ["config", "socket", "mode", "health-port", "log"]);
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
    const env = { ...process.env };
    if (typeof flags.socket === "string") env.AIP_SOCKET = flags.socket;
    if (typeof flags.mode === "string") env.AIP_MODE = flags.mode;
    if (typeof flags["health-port"] === "string") env.AIP_HEALTH_PORT = flags["health-port"];
    let config;
    try {
      config = loadConfig(typeof flags.config === "string" ? flags.config : undefined, env);
    } catch (err) {
      if (err instanceof ConfigError) {
        console.error(`aip up: ${err.message}`);
        return EXIT.usage;
      }
      throw err;
    }
    const logFile = typeof flags.log === "string" ? flags.log : envString("AIP_LOG_FILE");
    let agency;
    try {
      agency = await startAgency(config, { deps: { logDestination: logFile ?? 1 }, ownProcess: true });
    } catch (err) {
      console.error(`aip up: ${(err as Error).message}`);
      return EXIT.aipError;
    }
    const { orchestrator } = agency;
    const shown = relative(process.cwd(), config.socket);
    const sock = shown.startsWith("..") ? config.socket : `./${shown}`;
    const ready = agency.agents;
    // With logs on stdout the banner goes to stderr, keeping stdout pure JSON Lines.
    // The example names an action this config serves: echo where the test agent runs, else summarize.
    const actions = new Set(orchestrator.agents.flatMap((a) => a.manifest.capabilities));
    const example = actions.has("echo") ? "echo" : actions.has("summarize") ? "summarize" : undefined;
    const source = example === "summarize" ? "export const a = 1;" : "a\\nb";
    const banner =
      `agency ready on ${sock} (${config.mode}; ${ready})\n` +
      (example
        ? `  try: curl --unix-socket ${sock} http://aip/v1/invoke -d '{"action":"${example}","context":{"source_code":"${source}"},"constraints":{}}'\n`
        : `  try: curl --unix-socket ${sock} http://aip/v1/agents\n`);
    (logFile ? process.stdout : process.stderr).write(banner);
    await agency.stopped;
    return EXIT.ok;
  },
};
