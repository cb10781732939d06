/** Scenario 3: Unix socket vs TCP vs TCP+TLS on 127.0.0.1, a fresh connection per request at 12 requests/s. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { freshConnection, type FreshTarget } from "../lib/clients.js";
import { openLoop } from "../lib/loadgen.js";
import { benchDir, startProc } from "../lib/procs.js";
import { echoBody, interleave, ratio, table, type ScenarioBody } from "../lib/scenario.js";

const RATE = 12;

/** A self-signed certificate for 127.0.0.1, made now with openssl; undefined without openssl. */
function selfSigned(dir: string): { cert: string; key: string } | undefined {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    return { cert, key };
  } catch {
    return undefined;
  }
}

export const transport: ScenarioBody = {
  async run(ctx) {
    const rounds = ctx.quick ? 2 : 3;
    const durationMs = ctx.quick ? 2000 : 8000;
    const dir = benchDir();
    const tls = selfSigned(dir);
    const socket = join(dir, "transport.sock");
    const args = tls ? [socket, tls.cert, tls.key] : [socket];
    const server = await startProc(join(import.meta.dirname, "../lib/transport-server.js"), args, socket);
    try {
      const started = Date.now();
      while (!server.stdout().includes("\n") && Date.now() - started < 10_000)
        await new Promise((r) => setTimeout(r, 20));
      const ports = JSON.parse(server.stdout().split("\n")[0]!) as { tcp: number; tls: number };
      const targets: Record<string, FreshTarget> = {
        unix: { kind: "unix", socketPath: socket },
        tcp: { kind: "tcp", port: ports.tcp },
      };
      if (tls) targets.tls = { kind: "tls", port: ports.tls, ca: readFileSync(tls.cert, "utf8") };
      const contenders = Object.entries(targets).map(([name, target]) => ({
        name,
        measure: () => openLoop(freshConnection(target), RATE, durationMs, () => echoBody()),
      }));
      const cmp = await interleave(`[transport] ${RATE} req/s`, contenders, rounds, ctx.progress);
      const u = cmp.median.unix!;
      const rows = Object.keys(targets).map((name) => {
        const m = cmp.median[name]!;
        return [
          name,
          m.count,
          m.p50_ms,
          m.p95_ms,
          m.p99_ms,
          ratio(m.p50_ms, u.p50_ms),
          ratio(m.p95_ms, u.p95_ms),
          m.errors,
        ];
      });
      const markdown = [
        `Open loop at ${RATE} requests/s, every request on a new connection (TLS: a full handshake, no session resumption; RSA-2048 self-signed certificate made at run time), to one AIP-1 echo server (the agent runtime) listening on its Unix socket and on 127.0.0.1 TCP and TLS ports. Latency includes connecting. ${rounds} interleaved rounds of ${durationMs} ms; medians.${tls ? "" : " openssl was not found: TLS not measured."}`,
        "",
        table(
          ["transport", "requests/round", "p50 ms", "p95 ms", "p99 ms", "p50 / unix", "p95 / unix", "errors"],
          rows,
        ),
      ].join("\n");
      return { parameters: { rounds, duration_ms: durationMs, rate: RATE, tls: Boolean(tls) }, results: cmp, markdown };
    } finally {
      await server.stop();
    }
  },
};
