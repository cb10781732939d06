#!/usr/bin/env node
/** `aip`: the agency's command line. Each subcommand lives in tools/aip/<name>.ts. */
import { EXIT, UsageError, type Command } from "../tools/aip/command.js";

/** Subcommands, loaded on demand so `aip --help` stays fast. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  up: async () => (await import("../tools/aip/up.js")).up,
  invoke: async () => (await import("../tools/aip/invoke.js")).invoke,
  health: async () => (await import("../tools/aip/status.js")).health,
  agents: async () => (await import("../tools/aip/status.js")).agents,
  check: async () => (await import("../tools/aip/status.js")).check,
  reload: async () => (await import("../tools/aip/reload.js")).reload,
  canary: async () => (await import("../tools/aip/canary.js")).canary,
  vet: async () => (await import("../tools/aip/vet.js")).vet,
  trust: async () => (await import("../tools/aip/trust.js")).trust,
  untrust: async () => (await import("../tools/aip/trust.js")).untrust,
  systemd: async () => (await import("../tools/aip/systemd.js")).systemd,
  lsp: async () => (await import("../tools/aip/lsp.js")).lsp,
  mcp: async () => (await import("../tools/aip/mcp.js")).mcp,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--version" || name === "-V" || name === "version") {
    const { packageVersion } = await import("../orchestrator/core/config.js");
    console.log(`aip ${packageVersion()} (node ${process.versions.node})`);
    return EXIT.ok;
  }
  if (!name || name === "--help" || name === "-h" || name === "help") {
    const lines = await Promise.all(
      Object.entries(COMMANDS).map(async ([n, load]) => `  ${n.padEnd(10)} ${(await load()).summary}`),
    );
    console.log(
      `Usage: aip COMMAND [options]   (aip COMMAND --help for details; aip --version)\n\nCommands:\n${lines.join("\n")}\n\nEvery command that talks to the orchestrator takes --socket PATH (default: $AIP_SOCKET or ./run/aip.sock).`,
    );
    return name ? EXIT.ok : EXIT.usage;
  }
  const load = COMMANDS[name];
  if (!load) {
    console.error(`aip: unknown command ${JSON.stringify(name)}; commands: ${Object.keys(COMMANDS).join(", ")}`);
    return EXIT.usage;
  }
  const command = await load();
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
