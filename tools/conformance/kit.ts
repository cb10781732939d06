/**
 * The AIP-1 conformance kit: one battery of checks against any agent executable,
 * in one-shot and socket modes, over HTTP and NDJSON. Each check names what failed and why.
 */
import { spawn } from "node:child_process";
import { connect } from "node:net";
import { existsSync, lstatSync } from "node:fs";
import { join } from "node:path";
import { AGENT_LIMITS, DEFAULT_LIMITS } from "../../protocol/contract/limits.js";
import { ManifestSchema, ResponseSchema, formatIssues, type AgentManifest } from "../../protocol/contract/schemas.js";
import { httpRequest, ndjsonExchange, waitForSocket } from "../../protocol/transport/client.js";
import { ONE_SHOT_TIMEOUT_MS, runOnce, serve, socketDir, type Served } from "./process.js";

export class CheckFailure extends Error {}

function expect(cond: unknown, message: string): asserts cond {
  if (!cond) throw new CheckFailure(message);
}

/** What a one-shot check needs: each starts its own process. */
export interface OneShotContext {
  exe: string;
  manifest: AgentManifest;
  action: string;
  /** The context and constraints of a request the agent must answer with success. */
  sample: Sample;
}

export interface KitContext extends OneShotContext {
  /** A socket-mode instance shared by the socket and lifecycle checks; the last check stops it. */
  server: Served;
  /** How the shared server's start over a stale socket file went (the stale-socket check reads it). */
  stale: StaleStart;
  dir: string;
}

/** What a good request carries besides its action; agents that need more than a source (a workspace, a cursor) pass their own. */
export interface Sample {
  context: Record<string, unknown>;
  constraints: Record<string, unknown>;
}

/**
 * The shared server starts on a socket path where a dead process left its socket file: `created` says the
 * stale file was made, `error` why the agent did not start over it (it then runs on a fresh path).
 */
export interface StaleStart {
  created: boolean;
  error?: string;
}

export const DEFAULT_SAMPLE: Sample = { context: { source_code: "const a = 1;\n" }, constraints: {} };

/** One-shot checks are independent of each other and of the server: the kit runs several at once. */
export type Check =
  | { name: string; mode: "one-shot"; run(ctx: OneShotContext): Promise<void> }
  | { name: string; mode: "socket" | "lifecycle"; run(ctx: KitContext): Promise<void> };

export interface CheckResult {
  name: string;
  mode: Check["mode"];
  ok: boolean;
  reason?: string;
  ms: number;
}

type Envelope = Record<string, unknown> & {
  status: string;
  trace_id: string;
  error?: { type: string; detail: string; fields?: string[] };
};

/** Parse one response line and check it against the AIP-1 envelope schema. */
function envelope(text: string, where: string): Envelope {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CheckFailure(`${where}: response is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
  }
  const parsed = ResponseSchema.safeParse(json);
  if (!parsed.success) {
    throw new CheckFailure(
      `${where}: response breaks the AIP-1 envelope: ${formatIssues(parsed.error)
        .map((e) => `${e.path}: ${e.message}`)
        .join("; ")}`,
    );
  }
  return json as Envelope;
}

function expectError(env: Envelope, code: string, where: string): void {
  expect(
    env.status === "error" && env.error?.type === code,
    `${where}: expected ${code}, got ${env.status === "error" ? env.error?.type : "success"}`,
  );
}

function good(ctx: OneShotContext, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { action: ctx.action, context: ctx.sample.context, constraints: ctx.sample.constraints, ...extra };
}

async function oneShot(ctx: OneShotContext, input: string | Buffer): Promise<Envelope> {
  const r = await runOnce(ctx.exe, [], input);
  expect(!r.timedOut, `one-shot run did not exit within ${ONE_SHOT_TIMEOUT_MS / 1000} s`);
  expect(r.stderr === "", `one-shot run wrote to stderr: ${JSON.stringify(r.stderr.slice(0, 300))}`);
  expect(r.code === 0, `one-shot run exited with ${r.code ?? r.signal} after writing a response`);
  const lines = r.stdout.split("\n").filter((l) => l.length > 0);
  expect(lines.length === 1, `one-shot run must write exactly one response line, wrote ${lines.length}`);
  return envelope(lines[0]!, "one-shot");
}

/**
 * How long a socket exchange may take before the check fails: a hang detector, wide enough for a model-backed
 * agent answering a hundred requests in turn on a busy host.
 */
const EXCHANGE_TIMEOUT_MS = 60_000;

async function http(ctx: KitContext, body: string | Buffer): Promise<{ status: number; env: Envelope }> {
  const r = await httpRequest(ctx.server.socketPath, { body, timeoutMs: EXCHANGE_TIMEOUT_MS });
  return { status: r.status, env: envelope(r.body, "HTTP") };
}

async function ndjson(ctx: KitContext, data: string | Buffer, expectCount?: number): Promise<Envelope[]> {
  const lines = await ndjsonExchange(ctx.server.socketPath, data, {
    timeoutMs: EXCHANGE_TIMEOUT_MS,
    ...(expectCount ? { expect: expectCount } : {}),
  });
  return lines.map((l) => envelope(l, "NDJSON"));
}

const deep = "[".repeat(10_000) + "]".repeat(10_000);
const badUtf8 = Buffer.concat([
  Buffer.from('{"action":"'),
  Buffer.from([0xc3, 0x28, 0xff]),
  Buffer.from('","context":{},"constraints":{}}'),
]);

export const CHECKS: Check[] = [
  {
    name: "manifest: --manifest prints a valid AGENT_MANIFEST.json",
    mode: "one-shot",
    run: async () => undefined, // validated while the kit starts; listed so the report shows it
  },
  {
    name: "one-shot: a good request succeeds, trace id generated",
    mode: "one-shot",
    run: async (ctx) => {
      const env = await oneShot(ctx, JSON.stringify(good(ctx)));
      expect(env.status === "success", `expected success, got ${env.error?.type}: ${env.error?.detail}`);
      expect(typeof env.trace_id === "string" && env.trace_id.length > 0, "no trace_id generated");
    },
  },
  {
    name: "one-shot: the caller's trace id is echoed",
    mode: "one-shot",
    run: async (ctx) => {
      const env = await oneShot(ctx, JSON.stringify(good(ctx, { trace_id: "kit-trace-1" })));
      expect(env.trace_id === "kit-trace-1", `trace_id ${env.trace_id} is not the caller's kit-trace-1`);
    },
  },
  {
    name: "one-shot: invalid JSON → AIP_ERR_INVALID_JSON",
    mode: "one-shot",
    run: async (ctx) => expectError(await oneShot(ctx, '{"action": "x", '), "AIP_ERR_INVALID_JSON", "invalid JSON"),
  },
  {
    name: "one-shot: empty stdin → AIP_ERR_INVALID_JSON",
    mode: "one-shot",
    run: async (ctx) => expectError(await oneShot(ctx, ""), "AIP_ERR_INVALID_JSON", "empty stdin"),
  },
  ...(["action", "context", "constraints"] as const).map((field): Check => ({
    name: `one-shot: missing ${field} → AIP_ERR_MISSING_FIELD naming it`,
    mode: "one-shot",
    run: async (ctx) => {
      const req = good(ctx);
      delete req[field];
      const env = await oneShot(ctx, JSON.stringify(req));
      expectError(env, "AIP_ERR_MISSING_FIELD", `missing ${field}`);
      expect(env.error?.detail.includes(field), `detail does not name ${field}: ${env.error?.detail}`);
    },
  })),
  {
    name: "one-shot: every missing field is named at once",
    mode: "one-shot",
    run: async (ctx) => {
      const env = await oneShot(ctx, "{}");
      expectError(env, "AIP_ERR_MISSING_FIELD", "empty object");
      for (const f of ["action", "context", "constraints"])
        expect(env.error?.detail.includes(f), `detail does not name ${f}: ${env.error?.detail}`);
    },
  },
  {
    name: "one-shot: wrong types → AIP_ERR_INVALID_FIELD with the path",
    mode: "one-shot",
    run: async (ctx) => {
      const env = await oneShot(ctx, JSON.stringify({ action: 5, context: "x", constraints: [] }));
      expectError(env, "AIP_ERR_INVALID_FIELD", "wrong types");
      for (const f of ["action", "context", "constraints"])
        expect(env.error?.detail.includes(f), `detail does not name ${f}: ${env.error?.detail}`);
      const env2 = await oneShot(ctx, JSON.stringify(good(ctx, { constraints: { timeout_ms: -1 } })));
      expectError(env2, "AIP_ERR_INVALID_FIELD", "negative timeout");
      expect(
        env2.error?.detail.includes("constraints.timeout_ms"),
        `detail does not name constraints.timeout_ms: ${env2.error?.detail}`,
      );
    },
  },
  {
    name: "one-shot: an action the agent does not serve → AIP_ERR_NO_ROUTE",
    mode: "one-shot",
    run: async (ctx) =>
      expectError(
        await oneShot(ctx, JSON.stringify(good(ctx, { action: "no-such-action-kit" }))),
        "AIP_ERR_NO_ROUTE",
        "unknown action",
      ),
  },
  {
    name: "one-shot: a body over the limit → AIP_ERR_PAYLOAD_TOO_LARGE",
    mode: "one-shot",
    run: async (ctx) => {
      const big = JSON.stringify(good(ctx, { context: { source_code: "x".repeat(DEFAULT_LIMITS.maxBodyBytes) } }));
      expectError(await oneShot(ctx, big), "AIP_ERR_PAYLOAD_TOO_LARGE", "oversized stdin");
    },
  },
  {
    name: "one-shot: JSON nested 10,000 deep and invalid UTF-8 → AIP_ERR_INVALID_JSON",
    mode: "one-shot",
    run: async (ctx) => {
      expectError(await oneShot(ctx, deep), "AIP_ERR_INVALID_JSON", "deep nesting");
      expectError(await oneShot(ctx, badUtf8), "AIP_ERR_INVALID_JSON", "invalid UTF-8");
    },
  },
  {
    name: "socket HTTP: a good request succeeds with status 200; trace id echoed and generated",
    mode: "socket",
    run: async (ctx) => {
      const a = await http(ctx, JSON.stringify(good(ctx, { trace_id: "kit-http-1" })));
      expect(
        a.status === 200 && a.env.status === "success",
        `expected 200 success, got ${a.status} ${a.env.error?.type ?? ""}`,
      );
      expect(a.env.trace_id === "kit-http-1", "caller's trace id not echoed");
      const b = await http(ctx, JSON.stringify(good(ctx)));
      expect(b.env.trace_id.length > 0 && b.env.trace_id !== "kit-http-1", "no new trace id generated");
    },
  },
  {
    name: "socket HTTP: bad requests get the right code and HTTP status",
    mode: "socket",
    run: async (ctx) => {
      const cases: [string | Buffer, string, number][] = [
        ["{", "AIP_ERR_INVALID_JSON", 400],
        ["", "AIP_ERR_INVALID_JSON", 400],
        ['{"context":{},"constraints":{}}', "AIP_ERR_MISSING_FIELD", 400],
        ['{"action":1,"context":{},"constraints":{}}', "AIP_ERR_INVALID_FIELD", 400],
        [deep, "AIP_ERR_INVALID_JSON", 400],
        [badUtf8, "AIP_ERR_INVALID_JSON", 400],
      ];
      for (const [body, code, status] of cases) {
        const r = await http(ctx, body);
        expectError(r.env, code, `HTTP body ${JSON.stringify(body.toString().slice(0, 30))}`);
        expect(r.status === status, `HTTP status ${r.status} for ${code}, expected ${status}`);
      }
    },
  },
  {
    name: "socket HTTP: a body over the limit → 413, and the server keeps serving",
    mode: "socket",
    run: async (ctx) => {
      const big = JSON.stringify(good(ctx, { context: { source_code: "x".repeat(AGENT_LIMITS.maxBodyBytes + 10) } }));
      const r = await http(ctx, big);
      expect(r.status === 413, `HTTP status ${r.status}, expected 413`);
      expectError(r.env, "AIP_ERR_PAYLOAD_TOO_LARGE", "oversized body");
      const after = await http(ctx, JSON.stringify(good(ctx)));
      expect(after.env.status === "success", "server did not serve a request after the oversized one");
    },
  },
  {
    name: "socket NDJSON: good, bad and oversized lines answered in order",
    mode: "socket",
    run: async (ctx) => {
      const big = JSON.stringify(good(ctx, { context: { source_code: "x".repeat(AGENT_LIMITS.maxLineBytes) } }));
      const data =
        [
          JSON.stringify(good(ctx, { trace_id: "n-1" })),
          "{oops",
          big,
          deep,
          JSON.stringify(good(ctx, { trace_id: "n-2" })),
        ].join("\n") + "\n";
      const envs = await ndjson(ctx, data);
      expect(envs.length === 5, `expected 5 answers, got ${envs.length}`);
      expect(envs[0]!.trace_id === "n-1" && envs[0]!.status === "success", "first answer is not n-1's success");
      expectError(envs[1]!, "AIP_ERR_INVALID_JSON", "line 2");
      expectError(envs[2]!, "AIP_ERR_PAYLOAD_TOO_LARGE", "line 3");
      expectError(envs[3]!, "AIP_ERR_INVALID_JSON", "line 4");
      expect(envs[4]!.trace_id === "n-2" && envs[4]!.status === "success", "last answer is not n-2's success");
    },
  },
  {
    name: "socket NDJSON: an unterminated last object is answered at end of input",
    mode: "socket",
    run: async (ctx) => {
      const envs = await ndjson(ctx, JSON.stringify(good(ctx, { trace_id: "tail-1" })));
      expect(envs.length === 1 && envs[0]!.trace_id === "tail-1", `expected one answer for tail-1, got ${envs.length}`);
    },
  },
  {
    name: "socket NDJSON: 100 pipelined requests on one connection, all answered in order",
    mode: "socket",
    run: async (ctx) => {
      const data = Array.from({ length: 100 }, (_, i) => JSON.stringify(good(ctx, { trace_id: `p-${i}` })) + "\n").join(
        "",
      );
      const envs = await ndjson(ctx, data, 100);
      expect(envs.length === 100, `expected 100 answers, got ${envs.length}`);
      envs.forEach((e, i) => expect(e.trace_id === `p-${i}`, `answer ${i} has trace_id ${e.trace_id}: out of order`));
    },
  },
  {
    name: "socket: 200 concurrent connections all answered",
    mode: "socket",
    run: async (ctx) => {
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          i % 2 === 0
            ? http(ctx, JSON.stringify(good(ctx, { trace_id: `c-${i}` }))).then((r) => r.env)
            : ndjson(ctx, JSON.stringify(good(ctx, { trace_id: `c-${i}` })) + "\n", 1).then((e) => e[0]!),
        ),
      );
      results.forEach((e, i) => expect(e.trace_id === `c-${i}`, `connection ${i} got trace_id ${e.trace_id}`));
      const ok = results.filter((e) => e.status === "success" || e.error?.type === "AIP_ERR_SOCKET_BUSY").length;
      expect(ok === 200, `${200 - ok} of 200 answers were neither success nor AIP_ERR_SOCKET_BUSY`);
    },
  },
  {
    name: "socket: a client that disconnects mid-request does not stop the server",
    mode: "socket",
    run: async (ctx) => {
      await new Promise<void>((resolve, reject) => {
        const s = connect(ctx.server.socketPath);
        s.on("error", reject);
        s.on("connect", () => {
          s.write(
            'POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"action":',
          );
          s.destroy();
          resolve();
        });
      });
      await new Promise<void>((resolve, reject) => {
        const s = connect(ctx.server.socketPath);
        s.on("error", reject);
        s.on("connect", () => {
          s.write(`${JSON.stringify(good(ctx))}\n{"action":"${ctx.action}","cont`);
          s.destroy();
          resolve();
        });
      });
      const r = await http(ctx, JSON.stringify(good(ctx)));
      expect(r.env.status === "success", "server stopped serving after clients disconnected mid-request");
    },
  },
  {
    name: "socket: the socket file is mode 0600 by default",
    mode: "socket",
    run: async (ctx) => {
      const mode = lstatSync(ctx.server.socketPath).mode & 0o777;
      expect(mode === 0o600, `socket mode is ${mode.toString(8)}, expected 600`);
    },
  },
  {
    name: "lifecycle: a stale socket file at start is replaced",
    mode: "lifecycle",
    run: async (ctx) => {
      expect(ctx.stale.created, "could not create a stale socket file for the test");
      expect(ctx.stale.error === undefined, `agent did not start over a stale socket file: ${ctx.stale.error}`);
      const res = await httpRequest(ctx.server.socketPath, { body: JSON.stringify(good(ctx)) });
      expect(res.status === 200, `agent on a formerly stale socket answered ${res.status}`);
    },
  },
  {
    name: "lifecycle: a live server's socket is not stolen",
    mode: "lifecycle",
    run: async (ctx) => {
      const r = await new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => {
        const c = spawn(ctx.exe, ["--listen", ctx.server.socketPath], { stdio: ["ignore", "pipe", "pipe"] });
        let stderr = "";
        let stdout = "";
        // An agent that loads a compiler (testgen) takes seconds to start on a busy machine before it refuses.
        const t = setTimeout(() => c.kill("SIGKILL"), 60_000);
        c.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        c.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        c.on("exit", (code) => {
          clearTimeout(t);
          resolve({ code, stderr, stdout });
        });
      });
      expect(r.code !== 0 && r.code !== null, `a second agent on a live socket exited with ${r.code}; it must refuse`);
      expect(/listening|in use|refus/i.test(r.stderr + r.stdout), "the refusal gave no clear message");
      const res = await httpRequest(ctx.server.socketPath, { body: JSON.stringify(good(ctx)) });
      expect(res.status === 200, "the first server stopped answering after the takeover attempt");
    },
  },
  {
    // Last: it stops the shared server, which has served every check before it.
    name: "lifecycle: SIGTERM removes the socket file and exits 0",
    mode: "lifecycle",
    run: async (ctx) => {
      const { code } = await ctx.server.stop();
      expect(code === 0, `agent exited with ${code} after SIGTERM`);
      expect(!existsSync(ctx.server.socketPath), "socket file left behind after SIGTERM");
    },
  },
];

/**
 * Run the battery against `exe`; `onResult` sees each result as it comes; `sample` is the good request's
 * body; `only`, when given, runs just the checks whose name contains it (case-insensitive).
 */
export async function runConformance(
  exe: string,
  onResult?: (r: CheckResult) => void,
  sample: Sample = DEFAULT_SAMPLE,
  only?: string,
): Promise<CheckResult[]> {
  const m = await runOnce(exe, ["--manifest"], "");
  let manifest: AgentManifest;
  const results: CheckResult[] = [];
  const record = (r: CheckResult): void => {
    results.push(r);
    onResult?.(r);
  };
  try {
    const parsed = ManifestSchema.safeParse(JSON.parse(m.stdout));
    if (!parsed.success)
      throw new CheckFailure(
        formatIssues(parsed.error)
          .map((e) => `${e.path}: ${e.message}`)
          .join("; "),
      );
    expect(m.stderr === "", `--manifest wrote to stderr: ${m.stderr.slice(0, 200)}`);
    manifest = parsed.data;
  } catch (err) {
    record({
      name: CHECKS[0]!.name,
      mode: "one-shot",
      ok: false,
      reason: `--manifest: ${(err as Error).message}`,
      ms: 0,
    });
    return results;
  }
  const { dir, remove } = socketDir();
  const base: OneShotContext = { exe, manifest, action: manifest.capabilities[0]!, sample };
  const selected = CHECKS.filter((c) => only === undefined || c.name.toLowerCase().includes(only.toLowerCase()));
  const stale: StaleStart = { created: false };
  // The server starts alone (a model-backed agent's start is the heaviest step); its failure is recorded after
  // the one-shot checks' results.
  const started = await startShared(exe, dir, stale).then(
    (s) => ({ server: s }),
    (err: unknown) => ({ error: err as Error }),
  );
  try {
    const oneShots = selected.filter((c) => c.mode === "one-shot");
    for (const result of bounded(oneShots, ONE_SHOT_CONCURRENCY, (c) => timed(c.name, c.mode, () => c.run(base))))
      record(await result);
    if ("error" in started) throw started.error;
    const shared = started.server;
    await waitForSocket(shared.socketPath);
    // The SIGTERM check stops the server: what it wrote to stderr while serving is taken before.
    let servingStderr: string | undefined;
    const ctx: KitContext = {
      ...base,
      dir,
      stale,
      server: {
        ...shared,
        stop: () => {
          servingStderr ??= shared.stderr();
          return shared.stop();
        },
      },
    };
    for (const check of selected) {
      if (check.mode === "one-shot") continue;
      record(await timed(check.name, check.mode, () => check.run(ctx)));
    }
    const stderr = servingStderr ?? shared.stderr();
    record({
      name: "socket: nothing written to stderr while serving",
      mode: "socket",
      ok: stderr === "",
      ...(stderr ? { reason: stderr.slice(0, 300) } : {}),
      ms: 0,
    });
  } catch (err) {
    record({
      name: "socket: agent starts with --listen",
      mode: "socket",
      ok: false,
      reason: (err as Error).message,
      ms: 0,
    });
  } finally {
    if ("server" in started) await started.server.stop();
    remove();
  }
  return results;
}

/**
 * How many one-shot checks run at once: each spends much of its time starting a process and waiting on it. Two,
 * not more: a model-backed agent loads its model in each, and the hang detector must not fire on a busy host.
 */
const ONE_SHOT_CONCURRENCY = 2;

/** Run `check`, catching its failure into the result. */
async function timed(name: string, mode: Check["mode"], check: () => Promise<void>): Promise<CheckResult> {
  const start = performance.now();
  try {
    await check();
    return { name, mode, ok: true, ms: performance.now() - start };
  } catch (err) {
    return { name, mode, ok: false, reason: (err as Error).message, ms: performance.now() - start };
  }
}

/** `fn` of each item, at most `limit` running at once; the promises are in the items' order. */
function bounded<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R>[] {
  let running = 0;
  const waiting: (() => void)[] = [];
  return items.map(async (item) => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await fn(item);
    } finally {
      running--;
      waiting.shift()?.();
    }
  });
}

/**
 * Start the shared server where a process that bound the socket died without cleaning up, so that the
 * stale-socket check sees the agent replace the file; if it does not, the server starts on a fresh path and
 * the other checks still run.
 */
async function startShared(exe: string, dir: string, stale: StaleStart): Promise<Served> {
  const path = join(dir, "kit.sock");
  stale.created = await leaveStaleSocket(path);
  try {
    return await serve(exe, path);
  } catch (err) {
    if (!stale.created) throw err;
    stale.error = (err as Error).message;
    return serve(exe, join(dir, "fresh.sock"));
  }
}

/** Bind `path` in a process killed before it cleans up; true when the stale socket file is left. */
function leaveStaleSocket(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [
      "-e",
      `require("net").createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, "SIGKILL"))`,
    ]);
    c.on("error", () => resolve(false));
    c.on("exit", (code) => resolve(code === null && existsSync(path)));
  });
}
