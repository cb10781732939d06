/** `aip systemd render --out DIR`: unit files, sysusers/tmpfiles snippets and per-agent drop-ins for production. */
import { renderAll, writeRendered } from "../systemd/render.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";

export const systemd: Command = {
  summary: "render the systemd units and per-agent drop-ins (limits from the manifests)",
  usage: `Usage: aip systemd render --out DIR [--install-dir DIR] [--node PATH] [--agents a,b] [--versioned]

Writes into DIR:
  aip-orchestrator.service            the orchestrator (systemd mode), hardened
  aip-agent@.service                  the agent template (instance = agent name, or name-version)
  aip-agent@NAME.service.d/50-aip.conf  per agent, from manifests/NAME.json: MemoryMax, CPUQuota,
                                      CPUWeight, IOWeight, ExecStart and the hardening set
  aip.sysusers.conf, aip.tmpfiles.conf  the aip user and aip-users group; /run/aip and its sockets
  agents.list                         the instances to enable

  --install-dir DIR  where the agency is installed (default /opt/aip)
  --node PATH        node for the orchestrator's ExecStart (default /usr/bin/node)
  --agents a,b       only these agents (default: every agent-* bin with a manifest)
  --versioned        name instances NAME-VERSION (to run a canary beside the stable instance)

scripts/install-systemd installs what this renders.`,
  async run(argv) {
    const { flags, positionals } = parseArgs(argv, ["out", "install-dir", "node", "agents"], ["versioned"]);
    if (positionals[0] !== "render" || positionals.length !== 1) throw new UsageError(`expected the subcommand "render", got ${JSON.stringify(positionals.join(" "))}`);
    if (typeof flags.out !== "string") throw new UsageError("--out DIR is required");
    const files = renderAll({
      installDir: typeof flags["install-dir"] === "string" ? flags["install-dir"] : "/opt/aip",
      node: typeof flags.node === "string" ? flags.node : "/usr/bin/node",
      ...(typeof flags.agents === "string" ? { agents: flags.agents.split(",").filter(Boolean) } : {}),
      ...(flags.versioned ? { versioned: true } : {}),
    });
    for (const path of writeRendered(flags.out, files)) console.log(path);
    return EXIT.ok;
  },
};
