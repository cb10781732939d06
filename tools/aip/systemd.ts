/** `aip systemd render --out DIR`: unit files, sysusers/tmpfiles snippets and per-agent drop-ins for production. */
import { missingExecutables, renderAll, writeRendered } from "../systemd/render.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";

export const systemd: Command = {
  usage: `Usage: aip systemd render --out DIR [--install-dir DIR] [--node PATH] [--agents a,b] [--versioned]
                         [--model FILE.gguf] [--probe-port N] [--no-check]

Writes into DIR:
  aip-orchestrator.service            the orchestrator (systemd mode, Type=notify), hardened
  aip-orchestrator.socket             its listening socket, held by systemd across restarts
  aip-agent@.service                  the agent template (instance = agent name, or name-version)
  aip-agent@NAME.service.d/50-aip.conf  per agent, from manifests/NAME.json: MemoryMax, CPUQuota,
                                      CPUWeight, IOWeight, ExecStart and the hardening set
  aip.sysusers.conf, aip.tmpfiles.conf  the aip user and aip-users group; /run/aip and its sockets
  agents.list                         the instances to enable

  --install-dir DIR  where the agency is installed (default /opt/aip)
  --node PATH        node for the orchestrator's ExecStart (default /usr/bin/node)
  --agents a,b       only these agents (default: every agent-* bin with a manifest, except the
                     echo test agent dummy, which is rendered only when named here)
  --versioned        name instances NAME-VERSION (to run a canary beside the stable instance)
  --model FILE       Environment=AIP_MODEL=FILE for the agents that load a model (complete, summarize, diagnose);
                     per instance, /etc/aip/INSTANCE.env can set it too, without re-rendering
  --probe-port N     the orchestrator serves /livez, /readyz, /healthz, /metrics on 127.0.0.1:N
                     (its unit then allows AF_INET to localhost only)
  --no-check         do not check that every ExecStart (and the model) exists: for staging a
                     package whose install directory is not populated yet

Exit 1, naming each, when an ExecStart= executable or the model file is missing.

scripts/install-systemd installs what this renders.`,
  async run(argv) {
    const { flags, positionals } = parseArgs(
      argv,
      ["out", "install-dir", "node", "agents", "model", "probe-port"],
      ["versioned", "no-check"],
    );
    if (positionals[0] !== "render" || positionals.length !== 1)
      throw new UsageError(`expected the subcommand "render", got ${JSON.stringify(positionals.join(" "))}`);
    if (typeof flags.out !== "string") throw new UsageError("--out DIR is required");
    const probePort = typeof flags["probe-port"] === "string" ? Number(flags["probe-port"]) : undefined;
    if (probePort !== undefined && !(Number.isInteger(probePort) && probePort >= 1 && probePort <= 65535))
      throw new UsageError("--probe-port needs a port number 1-65535");
    const files = renderAll({
      installDir: typeof flags["install-dir"] === "string" ? flags["install-dir"] : "/opt/aip",
      node: typeof flags.node === "string" ? flags.node : "/usr/bin/node",
      ...(typeof flags.agents === "string" ? { agents: flags.agents.split(",").filter(Boolean) } : {}),
      ...(flags.versioned ? { versioned: true } : {}),
      ...(typeof flags.model === "string" ? { model: flags.model } : {}),
      ...(probePort !== undefined ? { probePort } : {}),
    });
    const missing = flags["no-check"] ? [] : missingExecutables(files);
    if (missing.length > 0) {
      console.error(
        `aip systemd render: the units would not start:\n${missing.map((m) => `  ${m}`).join("\n")}\n(--install-dir names where the agency is installed, after npm ci; --no-check renders anyway)`,
      );
      return EXIT.aipError;
    }
    for (const path of writeRendered(flags.out, files)) console.log(path);
    return EXIT.ok;
  },
};
