/**
 * The agency an editor or coding-agent bridge (`aip lsp`, `aip mcp`) talks to: the socket given
 * (`--socket`, `$AIP_SOCKET`, the config's), or, when nothing answers there, an embedded agency
 * started in this process on a private socket, as `aip up` starts one.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { homedir, tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { loadConfig } from "../../orchestrator/core/config.js";
import { startAgency, type RunningAgency } from "../../orchestrator/entry.js";
import { httpRequest } from "../../protocol/transport/client.js";
import type { Problem } from "../../protocol/contract/errors.js";
import { mergeRoots } from "../../protocol/util/workspace-roots.js";
import { socketPath } from "./socket.js";

export interface Agency {
  socket: string;
  /** True when this process started it (and stops it on close). */
  embedded: boolean;
  /** Where the embedded agency logs (JSON Lines), when embedded. */
  logFile?: string;
  /** Resolves once the agency serves (an embedded one starts in the background); rejects when it cannot start. */
  ready: Promise<void>;
  /** Stops an embedded agency and removes its directory (once, however often called). */
  close(): Promise<void>;
  /**
   * An embedded agency only: the client's workspace folders changed. The agents read their allowed
   * roots at start, so when the roots differ the agency is restarted on the same socket with the
   * config's roots plus these (`ready` waits for it; a warm verdict cache makes it a few seconds).
   * Resolves to true when it restarted.
   */
  setClientRoots?(paths: readonly string[]): Promise<boolean>;
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

/**
 * `connectAgency` for a stdio server command (`aip lsp`, `aip mcp`): the agency on `--socket`, or an
 * embedded one from `--config`; undefined, with the reason on stderr, when neither can be had.
 * `roots`: the client's workspace folders, allowed in an embedded agency besides its configured roots
 * (it starts once they are known).
 */
export async function agencyForServer(
  command: string,
  flags: Record<string, string | true | undefined>,
  roots?: Promise<readonly string[]>,
): Promise<Agency | undefined> {
  try {
    return await connectAgency({
      socket: flags.socket,
      config: typeof flags.config === "string" ? flags.config : undefined,
      ...(roots ? { roots } : {}),
    });
  } catch (err) {
    process.stderr.write(`aip ${command}: no agency and none could be started: ${(err as Error).message}\n`);
    return undefined;
  }
}

/**
 * Folders a client names that an embedded agency adds to its allowed roots: absolute, and not `/`
 * (an editor opened at the file system's root does not open every file to the agents).
 */
export function clientRoots(paths: readonly string[]): string[] {
  return paths.filter((p) => isAbsolute(p) && resolve(p) !== "/").map((p) => resolve(p));
}

/**
 * Where an embedded agency keeps its vetting verdicts: one file per user that outlives the agency's
 * temporary directory, so that the next editor session starts without vetting again.
 */
export function userVetCacheFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(base, "aip", "vet-cache.json");
}

/**
 * Connect to the agency on the given socket, or start an embedded one when none answers. The embedded
 * one starts in the background (`ready`), after `roots` (default: none beyond the config's) are known.
 */
export async function connectAgency(options: {
  socket?: string | true | undefined;
  config?: string | undefined;
  roots?: Promise<readonly string[]>;
}): Promise<Agency> {
  const wanted = socketPath(options.socket);
  if (await answers(wanted))
    return { socket: wanted, embedded: false, ready: Promise.resolve(), close: async () => undefined };
  const dir = mkdtempSync(join(tmpdir(), "aip-embedded-"));
  const env = {
    ...process.env,
    AIP_SOCKET: join(dir, "aip.sock"),
    AIP_AGENT_SOCKET_DIR: join(dir, "agents"),
    AIP_STATE_DIR: join(dir, "state"),
  };
  let config;
  try {
    config = loadConfig(options.config, env);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  config.vetCacheFile = userVetCacheFile();
  const logFile = join(dir, "aip.log");
  let agency: RunningAgency | undefined;
  let cancel: () => void = () => undefined;
  const cancelled = new Promise<undefined>((resolveCancel) => (cancel = () => resolveCancel(undefined)));
  const ready = (async () => {
    const extra = await Promise.race([options.roots ?? Promise.resolve([]), cancelled]);
    if (extra === undefined) throw new Error("the embedded agency was closed before it started");
    config.workspaceRoots = mergeRoots(clientRoots(extra), config.workspaceRoots);
    agency = await startAgency(config, { deps: { logDestination: logFile }, admin: false });
  })();
  ready.catch(() => undefined); // seen by whoever awaits it; never an unhandled rejection
  const configured = config.workspaceRoots;
  let closing: Promise<void> | undefined;
  /** Restarts run one after another; the last folders asked for win. */
  let restarts: Promise<unknown> = Promise.resolve();
  const embedded: Agency = {
    socket: config.socket,
    embedded: true,
    logFile,
    ready,
    close() {
      closing ??= (async () => {
        cancel();
        await embedded.ready.catch(() => undefined);
        await restarts.catch(() => undefined);
        await agency?.stop("client");
        rmSync(dir, { recursive: true, force: true });
      })();
      return closing;
    },
    setClientRoots(paths) {
      const next = restarts.then(async () => {
        await embedded.ready.catch(() => undefined);
        const roots = mergeRoots(clientRoots(paths), configured);
        if (closing !== undefined || sameRoots(roots, config.workspaceRoots)) return false;
        config.workspaceRoots = roots;
        const restarted = (async () => {
          await agency?.stop("workspace folders changed");
          agency = await startAgency(config, { deps: { logDestination: logFile }, admin: false });
        })();
        restarted.catch(() => undefined);
        embedded.ready = restarted;
        await restarted;
        return true;
      });
      restarts = next.catch(() => undefined);
      return next;
    },
  };
  return embedded;
}

function sameRoots(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((r) => b.includes(r));
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
