/**
 * The agency an editor or coding-agent bridge (`aip lsp`, `aip mcp`) talks to: the socket given
 * (`--socket`, `$AIP_SOCKET`, the config's), or, when nothing answers there, an embedded agency
 * started in this process on a private socket, as `aip up` starts one.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../orchestrator/core/config.js";
import { startAgency } from "../../orchestrator/entry.js";
import { httpRequest } from "../../protocol/transport/client.js";
import type { Problem } from "../../protocol/contract/errors.js";
import { socketPath } from "./socket.js";

export interface Agency {
  socket: string;
  /** True when this process started it (and stops it on close). */
  embedded: boolean;
  /** Where the embedded agency logs (JSON Lines), when embedded. */
  logFile?: string;
  close(): Promise<void>;
}

/** True when an AIP-1 server answers GET /healthz on `socket` (any status: it is there). */
async function answers(socket: string): Promise<boolean> {
  try {
    await httpRequest(socket, { path: "/healthz", timeoutMs: 2000, agent: false });
    return true;
  } catch {
    return false;
  }
}

/** Connect to the agency on the given socket, or start an embedded one when none answers. */
/**
 * `connectAgency` for a stdio server command (`aip lsp`, `aip mcp`): the agency on `--socket`, or an
 * embedded one from `--config`; undefined, with the reason on stderr, when neither can be had.
 */
export async function agencyForServer(
  command: string,
  flags: Record<string, string | true | undefined>,
): Promise<Agency | undefined> {
  try {
    return await connectAgency({
      socket: flags.socket,
      config: typeof flags.config === "string" ? flags.config : undefined,
    });
  } catch (err) {
    process.stderr.write(`aip ${command}: no agency and none could be started: ${(err as Error).message}\n`);
    return undefined;
  }
}

export async function connectAgency(options: {
  socket?: string | true | undefined;
  config?: string | undefined;
}): Promise<Agency> {
  const wanted = socketPath(options.socket);
  if (await answers(wanted)) return { socket: wanted, embedded: false, close: async () => undefined };
  const dir = mkdtempSync(join(tmpdir(), "aip-embedded-"));
  const env = {
    ...process.env,
    AIP_SOCKET: join(dir, "aip.sock"),
    AIP_AGENT_SOCKET_DIR: join(dir, "agents"),
    AIP_STATE_DIR: join(dir, "state"),
  };
  const config = loadConfig(options.config, env);
  const logFile = join(dir, "aip.log");
  const agency = await startAgency(config, { deps: { logDestination: logFile }, admin: false });
  return {
    socket: config.socket,
    embedded: true,
    logFile,
    async close() {
      await agency.stop("closed");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An AIP-1 answer, success or problem. */
export type Answer<T> = { ok: true; payload: T; warnings?: Problem[] } | { ok: false; problem: Problem };

/**
 * POST /v1/invoke over a keep-alive connection. Aborting `signal` closes the request, which the
 * orchestrator turns into a cancelled call (docs/operations.md "Deadlines and failures").
 */
export class AipCaller {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });

  constructor(readonly socket: string) {}

  invoke<T = Record<string, unknown>>(
    body: { action: string; context: Record<string, unknown>; constraints: Record<string, unknown> },
    signal?: AbortSignal,
  ): Promise<Answer<T>> {
    const data = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          socketPath: this.socket,
          method: "POST",
          path: "/v1/invoke",
          agent: this.agent,
          headers: { host: "aip", "content-type": "application/json", "content-length": Buffer.byteLength(data) },
          ...(signal ? { signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            try {
              const env = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
                status: string;
                payload?: T;
                error?: Problem;
                warnings?: Problem[];
              };
              resolve(
                env.status === "success"
                  ? { ok: true, payload: env.payload as T, ...(env.warnings ? { warnings: env.warnings } : {}) }
                  : { ok: false, problem: env.error! },
              );
            } catch (err) {
              reject(err as Error);
            }
          });
        },
      );
      req.on("error", reject);
      req.end(data);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
