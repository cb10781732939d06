/**
 * NDJSON control lines (docs/aip-1.md, Control lines): `unordered` lets answers out as they are ready,
 * `cancel` stops one request in flight on the connection and leaves the others and the connection be.
 */
import { connect, type Socket } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { successResponse } from "../../../protocol/contract/envelope.js";
import { createLogger } from "../../../protocol/util/log.js";
import { isControlLine } from "../../../protocol/transport/ndjson.js";
import { AgentInvoker } from "../../../agents/lib/runtime/invoke.js";
import type { AgentDefinition } from "../../../agents/lib/runtime/types.js";
import { serverFixture } from "../lib/servers.js";

const fixture = serverFixture();

/** A connection whose answer lines are collected; `next(n)` waits until `n` have come. */
async function session(path: string): Promise<{
  socket: Socket;
  lines: Record<string, any>[];
  next: (n: number) => Promise<Record<string, any>[]>;
}> {
  const socket = connect(path);
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const lines: Record<string, any>[] = [];
  let rest = "";
  let wake: (() => void) | undefined;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    rest += chunk;
    let nl: number;
    while ((nl = rest.indexOf("\n")) !== -1) {
      lines.push(JSON.parse(rest.slice(0, nl)) as Record<string, any>);
      rest = rest.slice(nl + 1);
    }
    wake?.();
  });
  const next = async (n: number): Promise<Record<string, any>[]> => {
    while (lines.length < n) await new Promise<void>((resolve) => (wake = resolve));
    return lines;
  };
  return { socket, lines, next };
}

const manifest = {
  aip: "1" as const,
  name: "t",
  version: "0.0.1",
  description: "test",
  capabilities: ["wait"],
  languages: ["*"],
  resources: { cpu: "100m", memory: "64Mi", gpu: false },
  max_concurrent: 8,
  timeouts_ms: { default: 10_000 },
};

describe("isControlLine", () => {
  it("is an object whose first member is control, with blanks allowed", () => {
    for (const yes of ['{"control":"unordered"}', ' { "control" : "cancel"}', '{\t"control":1}'])
      expect(isControlLine(Buffer.from(yes))).toBe(true);
    for (const no of ['{"action":"x","control":"cancel"}', '{"controls":1}', '"control"', "{", '{"contro'])
      expect(isControlLine(Buffer.from(no))).toBe(false);
  });
});

describe("NDJSON control lines", () => {
  it("unordered: answers are written as they are ready, and the control line itself is not answered", async () => {
    // Each of the first three is answered when the test releases it: the second, then the third, then the first.
    const release = new Map<number, () => void>();
    const s = await fixture.start({
      invoke: async (req) => {
        const ms = (req as { ms: number }).ms;
        if (ms > 0) await new Promise<void>((r) => release.set(ms, r));
        return successResponse({ ms }, `t${ms}`);
      },
    });
    const c = await session(s.socketPath);
    c.socket.write(`{"control":"unordered"}\n${[150, 1, 60].map((ms) => JSON.stringify({ ms })).join("\n")}\n`);
    await vi.waitFor(() => expect(release.size).toBe(3), { timeout: 20_000 });
    for (const [n, ms] of [
      [1, 1],
      [2, 60],
      [3, 150],
    ] as const) {
      release.get(ms)!();
      await c.next(n);
    }
    const lines = await c.next(3);
    expect(lines.map((l) => l.payload.ms)).toEqual([1, 60, 150]);
    // The next line is the next request's answer: nothing answered the control line meanwhile.
    c.socket.write(`${JSON.stringify({ ms: 0 })}\n`);
    expect((await c.next(4)).map((l) => l.payload?.ms)).toEqual([1, 60, 150, 0]);
    c.socket.destroy();
  });

  it("cancel: the named request's handler is cancelled and answered AIP_ERR_CANCELLED; the others go on, on the same connection", async () => {
    const aborted: string[] = [];
    const started: string[] = [];
    const handlers: AgentDefinition["handlers"] = {
      wait: (req, ctx) =>
        new Promise((resolve) => {
          started.push(ctx.traceId);
          const t = setTimeout(() => resolve({ done: ctx.traceId }), (req.constraints as { ms: number }).ms);
          ctx.signal.addEventListener("abort", () => {
            clearTimeout(t);
            aborted.push(ctx.traceId);
          });
        }),
    };
    const invoker = new AgentInvoker({ manifest, handlers }, createLogger({ agentName: "t", destination: false }));
    const s = await fixture.start({ invoke: (value, ctx) => invoker.invoke(value, ctx.signal) });
    const c = await session(s.socketPath);
    const req = (traceId: string, ms: number): string =>
      JSON.stringify({ action: "wait", context: {}, constraints: { ms }, trace_id: traceId });
    c.socket.write(`{"control":"unordered"}\n${req("long", 60_000)}\n${req("short", 200)}\n`);
    // Both handlers are running before the cancel is sent.
    await vi.waitFor(() => expect(started).toEqual(["long", "short"]), { timeout: 20_000 });
    // Unknown trace ids are ignored: no answer.
    c.socket.write(`{"control":"cancel","trace_id":"nobody"}\n{"control":"cancel","trace_id":"long"}\n`);
    // By trace id: which comes first depends on whether `short` ended before the cancel was read.
    const answers = new Map((await c.next(2)).map((a) => [a.trace_id, a]));
    expect(answers.get("long")).toMatchObject({ status: "error", error: { type: "AIP_ERR_CANCELLED" } });
    expect(answers.get("short")).toMatchObject({ status: "success", payload: { done: "short" } });
    expect(aborted).toEqual(["long"]);
    // The connection still serves.
    c.socket.write(`${req("after", 1)}\n`);
    expect((await c.next(3))[2]).toMatchObject({ trace_id: "after", status: "success" });
    expect(c.lines).toHaveLength(3);
    c.socket.destroy();
  });

  it("a control line not understood is answered AIP_ERR_INVALID_FIELD, and the connection goes on", async () => {
    const s = await fixture.start();
    const c = await session(s.socketPath);
    c.socket.write('{"control":"sideways"}\n{"control":"cancel","trace_id":""}\n{"control":\n{"action":"x"}\n');
    const lines = await c.next(4);
    expect(lines.slice(0, 3).map((l) => l.error?.type)).toEqual([
      "AIP_ERR_INVALID_FIELD",
      "AIP_ERR_INVALID_FIELD",
      "AIP_ERR_INVALID_FIELD",
    ]);
    expect(lines[3]).toMatchObject({ status: "success", payload: { echo: { action: "x" } } });
    c.socket.destroy();
  });

  it("an unordered connection's requests start at once where the server trusts multiplexers (agents), and take their turns where not (the front door)", async () => {
    for (const trustUnordered of [true, false]) {
      const s = await fixture.start({ trustUnordered, socketPath: `${fixture.dir}/t-${String(trustUnordered)}.sock` });
      const c = await session(s.socketPath);
      const lines = Array.from({ length: 10 }, (_, i) => JSON.stringify({ action: "x", trace_id: `p-${i}` }));
      c.socket.write(`{"control":"unordered"}\n${lines.join("\n")}\n`);
      await c.next(10);
      // Fair turns run the first request of a turn at once and defer the rest of a pipeline (protocol/transport/turns.ts).
      if (trustUnordered) expect(s.turnStats.deferred).toBe(0);
      else expect(s.turnStats.deferred).toBeGreaterThanOrEqual(9);
      c.socket.destroy();
    }
  });

  it("where the server trusts multiplexers, an unordered connection's large request still waits for its turn: a small one read with it is answered first", async () => {
    const s = await fixture.start({ trustUnordered: true });
    const c = await session(s.socketPath);
    const big = JSON.stringify({ action: "x", trace_id: "big", context: { source_code: "a".repeat(100_000) } });
    const small = JSON.stringify({ action: "x", trace_id: "small" });
    c.socket.write(`{"control":"unordered"}\n${big}\n${small}\n`);
    const answers = await c.next(2);
    expect(answers.map((a) => a.payload.echo.trace_id)).toEqual(["small", "big"]);
    expect(answers[1]!.payload.echo.context.source_code).toHaveLength(100_000);
    expect(s.turnStats.deferred).toBe(1);
    c.socket.destroy();
  });
});
