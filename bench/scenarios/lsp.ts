/** Scenario: what `aip lsp` adds to the AIP call it makes: textDocument/completion vs the same complete request sent directly. */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  CompletionRequest,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializeRequest,
  InitializedNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  createProtocolConnection,
} from "vscode-languageserver-protocol/node";
import { AipCaller } from "../../tools/aip/agency.js";
import { AIP, ROOT, benchDir, startProc, waitHealthy } from "../lib/procs.js";
import { interleave, table, type ScenarioBody } from "../lib/scenario.js";
import { round, summarize, type LatencySummary } from "../lib/stats.js";

/** Closed loop: `n` calls one after another, each timed. */
async function timed(n: number, call: () => Promise<unknown>): Promise<LatencySummary> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: unknown;
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    try {
      await call();
      latencies.push(performance.now() - t);
    } catch (err) {
      errors++;
      firstError ??= err;
    }
  }
  if (firstError !== undefined)
    process.stderr.write(`lsp scenario: ${errors} errors, the first: ${(firstError as Error).message}\n`);
  return summarize(latencies, errors, (performance.now() - started) / 1000);
}

export const lsp: ScenarioBody = {
  async run(ctx) {
    const rounds = ctx.quick ? 2 : 5;
    const perRound = ctx.quick ? 50 : 200;
    const dir = benchDir();
    const socket = join(dir, "aip.sock");
    const config = join(dir, "agency.json");
    writeFileSync(
      config,
      JSON.stringify({
        socket,
        agent_socket_dir: join(dir, "agents"),
        state_dir: join(dir, "state"),
        vetting: "off",
        agents: [
          {
            name: "complete-lite",
            command: [join(ROOT, "dist/agents/complete-lite/main.js")],
            manifest: join(ROOT, "manifests/complete-lite.json"),
          },
        ],
      }),
    );
    const agency = await startProc(AIP, ["up", "--config", config, "--log", join(dir, "aip.log")], socket);
    await waitHealthy(socket);
    const server = spawn(process.execPath, [AIP, "lsp", "--stdio", "--socket", socket], {
      stdio: ["pipe", "pipe", "ignore"],
    });
    const conn = createProtocolConnection(
      new StreamMessageReader(server.stdout),
      new StreamMessageWriter(server.stdin),
    );
    conn.listen();
    const direct = new AipCaller(socket);
    try {
      // A real module of this repository (~120 lines) with a line typed at its end: `Curs` completes to CursorSchema.
      const file = join(ROOT, "protocol/contract/schemas.ts");
      const text = `${readFileSync(file, "utf8")}\nexport const probe = Curs`;
      const lines = text.split("\n");
      const position = { line: lines.length - 1, character: lines.at(-1)!.length };
      const uri = pathToFileURL(file).href;
      await conn.sendRequest(InitializeRequest.type, {
        processId: process.pid,
        rootUri: pathToFileURL(ROOT).href,
        capabilities: {},
        workspaceFolders: null,
      });
      await conn.sendNotification(InitializedNotification.type, {});
      await conn.sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId: "typescript", version: 1, text },
      });
      // The request aip lsp sends for that completion (tools/aip/lsp.ts), from the same client class.
      const request = {
        action: "complete",
        context: {
          source_code: text,
          language: "typescript",
          file_path: file,
          workspace_root: ROOT,
          cursor: { line: position.line + 1, column: position.character },
        },
        constraints: { document_id: `${uri}#direct`, client_id: "bench", agent: "complete-lite", timeout_ms: 2000 },
      };
      const viaLsp = async (): Promise<void> => {
        const out = (await conn.sendRequest(CompletionRequest.type, { textDocument: { uri }, position })) as {
          items: unknown[];
        };
        if (out.items.length === 0) throw new Error("no items");
      };
      const viaAip = async (): Promise<void> => {
        const out = await direct.invoke<{ items: unknown[] }>(request);
        if (!out.ok) throw new Error(out.problem.detail);
        if (out.payload.items.length === 0) throw new Error("no items");
      };
      // Warm both paths (parse cache, JIT) before measuring.
      await timed(30, viaLsp);
      await timed(30, viaAip);
      const cmp = await interleave(
        `[lsp] ${perRound} completions`,
        [
          { name: "aip", measure: () => timed(perRound, viaAip) },
          { name: "lsp", measure: () => timed(perRound, viaLsp) },
        ],
        rounds,
        ctx.progress,
      );
      const a = cmp.median.aip!;
      const l = cmp.median.lsp!;
      const added = { p50_ms: round(l.p50_ms - a.p50_ms, 3), p95_ms: round(l.p95_ms - a.p95_ms, 3) };
      const markdown = [
        `Closed loop, one client: \`textDocument/completion\` through \`aip lsp\` (JSON-RPC over stdio, then the AIP call) against the same \`complete\` request sent directly to the agency with the same HTTP client, on a ${lines.length}-line buffer (protocol/contract/schemas.ts). ${rounds} interleaved rounds of ${perRound} requests; medians. The LSP layer adds **${added.p50_ms} ms at the median** (${added.p95_ms} ms at p95).`,
        "",
        table(
          ["path", "requests/round", "p50 ms", "p95 ms", "p99 ms", "errors"],
          [
            ["AIP call", a.count, a.p50_ms, a.p95_ms, a.p99_ms, a.errors],
            ["aip lsp", l.count, l.p50_ms, l.p95_ms, l.p99_ms, l.errors],
            ["added by the LSP layer", null, added.p50_ms, added.p95_ms, null, null],
          ],
        ),
      ].join("\n");
      return {
        parameters: { rounds, per_round: perRound, buffer_lines: lines.length },
        results: { ...cmp, added_ms: added },
        markdown,
      };
    } finally {
      await conn.sendRequest(ShutdownRequest.type).catch(() => undefined);
      await conn.sendNotification(ExitNotification.type).catch(() => undefined);
      conn.dispose();
      server.kill();
      direct.close();
      await agency.stop();
    }
  },
};
