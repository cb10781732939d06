#!/usr/bin/env node
/**
 * What one client connection costs the front door: an AipServer (no agents behind it, a canned answer)
 * in its own process, and a client opening connections one after another, each sending one request of a
 * kind and waiting for the server to close it, as the hostile neighbour does (bench/lib/neighbour.ts).
 * The server's CPU time per connection is read from its process (user + system). Several builds are
 * measured in the same run, alternating round by round, so a loaded machine shifts them alike.
 *
 * `node dist/bench/connection-cost.js [--dist DIR,DIR] [--kinds K,K] [--rounds 5] [--n 1000] [--out FILE] [--prof DIR]`
 * Kinds: bad_chunk (chunked, invalid chunk size: 400), invoke_close (a valid invoke, Connection: close),
 * ndjson_one (one NDJSON line, then the client half-closes).
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { DIST } from "./lib/procs.js";

const HEAD = "POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Type: application/json\r\n";
const ECHO = JSON.stringify({ action: "echo", context: {}, constraints: {} });
const KINDS: Record<string, string> = {
  bad_chunk: `${HEAD}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
  invoke_close: `${HEAD}Connection: close\r\nContent-Length: ${ECHO.length}\r\n\r\n${ECHO}`,
  ndjson_one: `${ECHO}\n`,
};

/** Server mode: `connection-cost.js --serve DIST SOCKET`; answers "cpu" messages with its CPU µs. */
async function serve(dist: string, socketPath: string): Promise<void> {
  const { AipServer } = (await import(
    join(dist, "protocol/transport/server.js")
  )) as typeof import("../protocol/transport/server.js");
  await AipServer.listen({
    socketPath,
    invoke: async (value) => ({
      status: "success",
      payload: { echoed: (value as { action?: unknown }).action },
      trace_id: "t",
    }),
  });
  process.on("message", () => {
    const u = process.cpuUsage();
    process.send!(u.user + u.system);
  });
  process.once("SIGINT", () => process.exit(0));
  process.send!("ready");
}

function once(bytes: string, socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    let got = 0;
    const c = connect(socketPath, () => {
      if (bytes.endsWith("\n") && !bytes.startsWith("POST")) c.end(bytes);
      else c.write(bytes);
    });
    c.on("data", (d: Buffer) => (got += d.length));
    c.on("error", () => undefined);
    c.on("close", () => resolve(got > 0));
  });
}

function ask(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once("message", (m) => resolve(m as number));
    child.send("cpu");
  });
}

if (process.argv[2] === "--serve") {
  await serve(process.argv[3]!, process.argv[4]!);
} else {
  const args = process.argv.slice(2);
  const opt = (name: string, dflt: string): string => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1]! : dflt;
  };
  const dists = opt("--dist", DIST).split(",");
  const kinds = opt("--kinds", Object.keys(KINDS).join(",")).split(",");
  const rounds = Number(opt("--rounds", "5"));
  const n = Number(opt("--n", "1000"));
  const prof = opt("--prof", "");
  const dir = mkdtempSync(join(tmpdir(), "aip-conncost-"));
  const servers: { dist: string; socket: string; child: ChildProcess }[] = [];
  try {
    for (const [i, dist] of dists.entries()) {
      const socket = join(dir, `s${i}.sock`);
      const child = fork(import.meta.filename, ["--serve", dist, socket], {
        stdio: ["ignore", "inherit", "inherit", "ipc"],
        // --prof DIR: each server writes a V8 CPU profile there (bench/lib/profile-summary.ts reads it).
        execArgv: prof ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : [],
      });
      await new Promise((resolve) => child.once("message", resolve));
      servers.push({ dist, socket, child });
    }
    const perConn: Record<string, Record<string, number[]>> = {};
    for (let r = 0; r < rounds; r++)
      for (const kind of kinds)
        for (const s of r % 2 === 0 ? servers : [...servers].reverse()) {
          for (let i = 0; i < 50; i++) await once(KINDS[kind]!, s.socket); // warm
          const before = await ask(s.child);
          let answered = 0;
          for (let i = 0; i < n; i++) if (await once(KINDS[kind]!, s.socket)) answered++;
          const us = ((await ask(s.child)) - before) / n;
          ((perConn[kind] ??= {})[s.dist] ??= []).push(Math.round(us * 10) / 10);
          console.error(
            `round ${r + 1} ${kind} ${s.dist}: ${us.toFixed(1)} µs CPU/connection, ${answered}/${n} answered`,
          );
        }
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
    const summary = Object.fromEntries(
      Object.entries(perConn).map(([kind, byDist]) => [
        kind,
        Object.fromEntries(Object.entries(byDist).map(([d, xs]) => [d, { median_us: median(xs), rounds_us: xs }])),
      ]),
    );
    const out = {
      command: `node dist/bench/connection-cost.js ${args.join(" ")}`,
      date: new Date().toISOString(),
      loadavg_1m: loadavg()[0],
      n,
      rounds,
      server_cpu_us_per_connection: summary,
    };
    const file = opt("--out", "");
    if (file) writeFileSync(file, JSON.stringify(out, null, 2) + "\n");
    console.log(JSON.stringify(out, null, 2));
  } finally {
    // SIGINT lets a profiled server write its profile (process.exit in its handler).
    await Promise.all(
      servers.map((s) => new Promise((resolve) => (s.child.once("exit", resolve), s.child.kill("SIGINT")))),
    );
    rmSync(dir, { recursive: true, force: true });
  }
}
