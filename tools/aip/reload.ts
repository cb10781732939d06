/** `aip reload`: a new orchestrator on the same socket, agents kept (embedded mode; the same as SIGHUP). */
import { httpRequest } from "../../protocol/transport/client.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";
import { socketPath } from "./socket.js";

const livezPid = async (sock: string): Promise<number> =>
  (JSON.parse((await httpRequest(sock, { path: "/livez", timeoutMs: 30_000, agent: false })).body) as { pid: number })
    .pid;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export const reload: Command = {
  usage: `Usage: aip reload [--socket PATH] [--timeout-ms N]

Embedded mode: sends SIGHUP to the orchestrator serving PATH. It starts a new orchestrator
on the same listening socket, hands it the running agents, and once the new one serves it
stops accepting, answers what it has read, and exits. Prints the new orchestrator's pid.
Exit 1 if the old one is still there after --timeout-ms (default 60000).
Under systemd use systemctl restart aip-orchestrator: the socket unit holds the clients.`,
  async run(argv) {
    const { flags, positionals } = parseArgs(argv, ["socket", "timeout-ms"]);
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
    const sock = socketPath(flags.socket);
    const timeoutMs = typeof flags["timeout-ms"] === "string" ? Number(flags["timeout-ms"]) : 60_000;
    let old: number;
    try {
      old = await livezPid(sock);
    } catch (err) {
      console.error(
        `aip: cannot reach the orchestrator on ${sock}: ${(err as Error).message} (is \`aip up\` running?)`,
      );
      return EXIT.aipError;
    }
    process.kill(old, "SIGHUP");
    const end = Date.now() + timeoutMs;
    while (alive(old)) {
      if (Date.now() > end) {
        console.error(
          `aip reload: orchestrator ${old} is still running after ${timeoutMs} ms (see its log: reload_failed?)`,
        );
        return EXIT.aipError;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const now = await livezPid(sock);
    console.log(`reloaded: orchestrator ${old} → ${now}`);
    return now !== old ? EXIT.ok : EXIT.aipError;
  },
};
