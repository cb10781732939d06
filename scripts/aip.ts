#!/usr/bin/env node
/** `aip`: the agency's command line. Each subcommand lives in tools/aip/<name>.ts. */
import { EXIT, UsageError, type Command } from "../tools/aip/command.js";

/**
 * Subcommands with their one-line summaries: a module is loaded only when its command runs, so each `aip` run
 * pays for its own command alone (`aip --help` loads none).
 */
const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  up: {
    summary: "run the agency: the orchestrator and (embedded mode) its agents",
    load: async () => (await import("../tools/aip/up.js")).up,
  },
  invoke: {
    summary: "send one request built from a file and print the answer",
    load: async () => (await import("../tools/aip/invoke.js")).invoke,
  },
  health: {
    summary: "table of agents from /healthz",
    load: async () => (await import("../tools/aip/status.js")).health,
  },
  agents: {
    summary: "registered agents with their capabilities and languages",
    load: async () => (await import("../tools/aip/status.js")).agents,
  },
  check: {
    summary: "health-check every agent now; unresponsive agents are restarted, failed ones started again",
    load: async () => (await import("../tools/aip/status.js")).check,
  },
  reload: {
    summary: "restart the orchestrator on its socket without refusing a client; agents keep running",
    load: async () => (await import("../tools/aip/reload.js")).reload,
  },
  canary: {
    summary: "canary rollouts: start, status, promote, rollback",
    load: async () => (await import("../tools/aip/canary.js")).canary,
  },
  vet: {
    summary: "vet an agent executable before it may join (links, behaviour under strace, manifest)",
    load: async () => (await import("../tools/aip/vet.js")).vet,
  },
  trust: {
    summary: "trust a workspace: its test runner and configs may run, sandboxed (--list: the trusted)",
    load: async () => (await import("../tools/aip/trust.js")).trust,
  },
  untrust: {
    summary: "stop trusting a workspace recorded by aip trust",
    load: async () => (await import("../tools/aip/trust.js")).untrust,
  },
  systemd: {
    summary: "render the systemd units and per-agent drop-ins (limits from the manifests)",
    load: async () => (await import("../tools/aip/systemd.js")).systemd,
  },
  lsp: {
    summary: "a Language Server over stdio in front of the agency (completion, symbols, hover, tests)",
    load: async () => (await import("../tools/aip/lsp.js")).lsp,
  },
  mcp: {
    summary: "an MCP server over stdio for coding agents (summarize, search, tests, completion, diagnosis)",
    load: async () => (await import("../tools/aip/mcp.js")).mcp,
  },
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--version" || name === "-V" || name === "version") {
    const { packageVersion } = await import("../orchestrator/core/config.js");
    console.log(`aip ${packageVersion()} (node ${process.versions.node})`);
    return EXIT.ok;
  }
  if (!name || name === "--help" || name === "-h" || name === "help") {
    const lines = Object.entries(COMMANDS).map(([n, { summary }]) => `  ${n.padEnd(10)} ${summary}`);
    console.log(
      `Usage: aip COMMAND [options]   (aip COMMAND --help for details; aip --version)\n\nCommands:\n${lines.join("\n")}\n\nEvery command that talks to the orchestrator takes --socket PATH (default: $AIP_SOCKET or ./run/aip.sock).`,
    );
    return name ? EXIT.ok : EXIT.usage;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    console.error(`aip: unknown command ${JSON.stringify(name)}; commands: ${Object.keys(COMMANDS).join(", ")}`);
    return EXIT.usage;
  }
  const command = await entry.load();
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(command.usage);
    return EXIT.ok;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`aip ${name}: ${err.message}\n\n${command.usage}`);
      return EXIT.usage;
    }
    throw err;
  }
}

process.exitCode = await main(process.argv.slice(2));
