/** `aip canary start|status|promote|rollback`: canary rollouts of agent versions. */
import { httpRequest } from "../../protocol/transport/client.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";
import { adminSocketPath } from "./socket.js";
import { table } from "./status.js";

type Status = {
  agent: string;
  stable: { version: string; state: string; window: Window } | null;
  canary: { version: string; percent: number; state: string; window: Window } | null;
  retained: { version: string; until: string; state: string } | null;
  last_decision: { at: string; action: string; reason: string; automatic: boolean } | null;
};
type Window = { requests: number; errors: number; error_rate: number; p95_ms: number };

function render(list: Status[]): string {
  const rows: string[][] = [];
  for (const s of list) {
    const w = (x: Window): string[] => [String(x.requests), `${(x.error_rate * 100).toFixed(1)}%`, String(x.p95_ms)];
    if (s.stable)
      rows.push([
        s.agent,
        s.stable.version,
        "stable",
        String(100 - (s.canary?.percent ?? 0)) + "%",
        s.stable.state,
        ...w(s.stable.window),
      ]);
    if (s.canary)
      rows.push([s.agent, s.canary.version, "canary", `${s.canary.percent}%`, s.canary.state, ...w(s.canary.window)]);
    if (s.retained)
      rows.push([
        s.agent,
        s.retained.version,
        `retained until ${s.retained.until}`,
        "0%",
        s.retained.state,
        "-",
        "-",
        "-",
      ]);
  }
  const decisions = list
    .filter((s) => s.last_decision)
    .map(
      (s) =>
        `${s.agent}: ${s.last_decision!.action}${s.last_decision!.automatic ? " (automatic)" : ""} at ${s.last_decision!.at}: ${s.last_decision!.reason}`,
    );
  return `${table(["AGENT", "VERSION", "ROLE", "TRAFFIC", "STATE", "REQUESTS", "ERROR RATE", "P95 MS"], rows)}\n\nLast decisions:\n${decisions.map((d) => `  ${d}`).join("\n") || "  none"}`;
}

async function call(
  sock: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await httpRequest(sock, {
    method,
    path,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    timeoutMs: 60_000,
  });
  return { status: res.status, json: JSON.parse(res.body) as Record<string, unknown> };
}

export const canary: Command = {
  usage: `Usage: aip canary start AGENT --version V [--percent 5] [--admin-socket PATH]
       aip canary status [--json] [--admin-socket PATH]
       aip canary promote AGENT [--admin-socket PATH]
       aip canary rollback AGENT [--admin-socket PATH]

start     run version V of AGENT beside the stable one on its own socket and send it the
          requests whose trace id bucket (FNV-1a 32 of the UTF-8 trace id, mod 100) is
          below PERCENT. V must be declared in the agency config (agents[].versions, with
          its command); it is vetted in the sandbox first and must print a manifest with
          version V
status    versions, traffic share, requests, error rate and P95 per version, last decision
promote   the canary becomes the stable; the old stable is retained (out of rotation)
          for the retention window, then stopped
rollback  stop the canary; after a promotion, restore the retained version

These talk to the owner-only admin socket: --admin-socket, $AIP_ADMIN_SOCKET, or the
one beside --socket / $AIP_SOCKET / the config's socket (aip.sock -> aip.admin.sock).`,
  async run(argv) {
    const { flags, positionals } = parseArgs(argv, ["version", "percent", "socket", "admin-socket"], ["json"]);
    const [verb, agent, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
    const sock = adminSocketPath(flags["admin-socket"], flags.socket);
    let res: { status: number; json: Record<string, unknown> };
    try {
      if (verb === "status") {
        res = await call(sock, "GET", "/v1/admin/canary");
      } else if (verb === "start") {
        if (!agent) throw new UsageError("start needs an AGENT");
        if (typeof flags.version !== "string") throw new UsageError("start needs --version V");
        const percent = flags.percent === undefined ? undefined : Number(flags.percent);
        if (percent !== undefined && (!Number.isFinite(percent) || percent < 0 || percent > 100))
          throw new UsageError(`--percent must be 0-100, got ${String(flags.percent)}`);
        res = await call(sock, "POST", "/v1/admin/canary/start", {
          agent,
          version: flags.version,
          ...(percent !== undefined ? { percent } : {}),
        });
      } else if (verb === "promote" || verb === "rollback") {
        if (!agent) throw new UsageError(`${verb} needs an AGENT`);
        res = await call(sock, "POST", `/v1/admin/canary/${verb}`, { agent });
      } else {
        throw new UsageError(`expected start, status, promote or rollback, got ${JSON.stringify(verb ?? "")}`);
      }
    } catch (err) {
      if (err instanceof UsageError) throw err;
      console.error(`aip canary: cannot reach the orchestrator on ${sock}: ${(err as Error).message}`);
      return EXIT.aipError;
    }
    if (res.status !== 200) {
      const e = (res.json.error ?? {}) as Record<string, unknown>;
      console.error(`${String(e.type)} (${String(e.status)}): ${String(e.detail)}`);
      return EXIT.aipError;
    }
    if (flags.json) console.log(JSON.stringify(res.json, null, 2));
    else console.log(render(verb === "status" ? (res.json.canary as Status[]) : [res.json as unknown as Status]));
    return EXIT.ok;
  },
};
