/**
 * The hostile neighbour of the `hostile` scenario, run as its own process (a real second client: its
 * own event loop and CPU, not the measuring process's). Each abuse runs in its own loop until the parent
 * sends "stop"; the process then replies with how many of each it sent and exits.
 *
 * `node dist/bench/lib/neighbour.js SOCKET WORKSPACE [ABUSE,...]` (default: every abuse).
 */
import { rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { httpRequest, ndjsonExchange } from "../../protocol/transport/client.js";
import { echoBody } from "./scenario.js";
import { envInt } from "../../protocol/util/env.js";

const MiB = 1024 * 1024;
const HEAD = "POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Type: application/json\r\n";

/** Every abuse the neighbour knows, in report order (docs/performance.md, "The hostile neighbour"). */
export const ABUSES = [
  "non_reading",
  "unfinished_body",
  "bad_chunk",
  "ndjson_flood_10k",
  "line_at_limit",
  "growing_numbers",
  "redos_search",
  "deep_nesting",
  "file_churn",
] as const;
/**
 * Controls, never part of "every abuse": `cpu_burn` sends nothing and only takes CPU from the same two
 * cores, a thread busy `BURN_BUSY_MS` of every `BURN_PERIOD_MS` (2/3 of a core: about what search,
 * summarize and the neighbour's own process use together beside every abuse, docs/performance.md).
 * The well-behaved clients' p99 beside it is what CPU competition alone costs them on this machine.
 */
export const CONTROLS = ["cpu_burn"] as const;
export type Abuse = (typeof ABUSES)[number] | (typeof CONTROLS)[number];
const BURN_BUSY_MS = 20;
const BURN_PERIOD_MS = 30;

/** Write bytes on a new connection; resolve when the server closes it (or after `capMs`). */
function sendAndWaitClose(socket: string, bytes: string | Buffer, capMs: number): Promise<void> {
  return new Promise((resolve) => {
    const c = connect(socket, () => c.write(bytes));
    const timer = setTimeout(() => c.destroy(), capMs);
    c.on("data", () => undefined);
    c.on("error", () => undefined);
    c.on("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function invoke(socket: string, body: string): Promise<unknown> {
  return httpRequest(socket, { body, timeoutMs: 30_000 }).catch(() => undefined);
}

/** Start the chosen abuses against `socket`; `stop` ends them and returns how many of each were sent. */
export function neighbour(
  socket: string,
  workspace: string,
  abuses: readonly Abuse[] = ABUSES,
): { stop(): Promise<Record<string, number>> } {
  let running = true;
  const on = new Set(abuses);
  const counts: Record<string, number> = {};
  const loops: Promise<void>[] = [];
  const loop = (name: Abuse, step: () => Promise<unknown>): void => {
    if (!on.has(name)) return;
    counts[name] = 0;
    loops.push(
      (async () => {
        while (running) {
          await step().catch(() => undefined);
          counts[name]!++;
        }
      })(),
    );
  };
  const held: Socket[] = [];
  const burners: Worker[] = [];
  if (on.has("cpu_burn")) {
    // AIP_HOSTILE_BURN_THREADS: how many such threads (default 1; every abuse at once keeps search,
    // summarize and the neighbour busy beside the orchestrator and agent-dummy: 3 processes).
    const threads = envInt("AIP_HOSTILE_BURN_THREADS")!;
    counts.cpu_burn = threads;
    for (let i = 0; i < threads; i++)
      burners.push(
        new Worker(
          `const { parentPort } = require("node:worker_threads");
           let stop = false;
           parentPort.once("message", () => { stop = true; });
           const tick = () => {
             if (stop) return parentPort.close();
             const end = Date.now() + ${BURN_BUSY_MS};
             while (Date.now() < end);
             setTimeout(tick, ${BURN_PERIOD_MS - BURN_BUSY_MS});
           };
           tick();`,
          { eval: true },
        ),
      );
  }
  if (on.has("non_reading")) {
    // Clients that never read: 10 connections, each writing 300 KB of `{}` lines.
    counts.non_reading = 10;
    for (let i = 0; i < 10; i++) {
      const c = connect(socket, () => {
        c.pause();
        c.write("{}\n".repeat(100_000));
      });
      c.on("error", () => undefined);
      held.push(c);
    }
  }
  if (on.has("unfinished_body")) {
    // Unfinished bodies: 5 connections that declare 100 bytes and send 10 (answered 408 in time).
    counts.unfinished_body = 5;
    for (let i = 0; i < 5; i++) {
      const c = connect(socket, () => c.write(`${HEAD}Content-Length: 100\r\n\r\n{"action":`));
      c.on("error", () => undefined);
      c.on("data", () => undefined);
      held.push(c);
    }
  }
  const atLimitShell = JSON.stringify({ action: "echo", context: { source_code: "" }, constraints: {} });
  const atLimit = atLimitShell.replace('"source_code":""', `"source_code":"${"a".repeat(MiB - atLimitShell.length)}"`);
  const grows = JSON.stringify({ action: "echo", context: { n: [] }, constraints: {} }).replace(
    "[]",
    `[${Array(64_000).fill("1e20").join(",")}]`,
  );
  const flood = `${echoBody()}\n`.repeat(10_000);
  const search = (query: string, paths?: string[]): string =>
    JSON.stringify({
      action: "search",
      context: { workspace_root: workspace, query },
      constraints: { refresh_ms: 0, ...(paths ? { paths } : {}) },
    });
  const deep = JSON.stringify({
    action: "summarize",
    context: { source_code: `const a = ${"[".repeat(50_000)}${"]".repeat(50_000)};\n`, language: "typescript" },
    constraints: {},
  });
  let churn = 0;
  loop("bad_chunk", () =>
    sendAndWaitClose(socket, `${HEAD}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 5000),
  );
  loop("ndjson_flood_10k", () => ndjsonExchange(socket, flood, { timeoutMs: 60_000 }));
  loop("line_at_limit", () => ndjsonExchange(socket, `${atLimit}\n`, { timeoutMs: 30_000 }));
  loop("growing_numbers", () => invoke(socket, grows));
  loop("redos_search", () =>
    Promise.all([invoke(socket, search("A".repeat(200_000))), invoke(socket, search("pool", ["**/*a*a*a*a*a*a*a*b"]))]),
  );
  loop("deep_nesting", () => invoke(socket, deep));
  loop("file_churn", async () => {
    const name = join(workspace, `churn-${churn++ % 20}.ts`);
    writeFileSync(name, "export function churn(): number { return 1; }\n");
    const searched = invoke(socket, search("churn"));
    rmSync(name, { force: true });
    await searched;
  });
  return {
    async stop() {
      running = false;
      for (const b of burners) b.postMessage("stop");
      await Promise.all(loops);
      await Promise.all(burners.map((b) => b.terminate()));
      for (const c of held) c.destroy();
      return counts;
    },
  };
}

if (process.argv[1] && import.meta.filename === process.argv[1] && process.send) {
  const [socket, workspace, list] = process.argv.slice(2);
  const abuses = list ? (list.split(",") as Abuse[]) : ABUSES;
  const n = neighbour(socket!, workspace!, abuses);
  process.send("started");
  process.once("message", () => {
    void n.stop().then((counts) => process.send!(counts, () => process.exit(0)));
  });
}
