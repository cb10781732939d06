import { describe, expect, it } from "vitest";
import { AipError } from "../../../../protocol/contract/errors.js";
import { createLogger } from "../../../../protocol/util/log.js";
import { AgentInvoker } from "../../../../agents/lib/runtime/invoke.js";
import type { AgentDefinition } from "../../../../agents/lib/runtime/types.js";

const manifest = {
  aip: "1" as const,
  name: "t",
  version: "0.0.1",
  description: "test",
  capabilities: ["go", "slow", "boom", "warn"],
  languages: ["*"],
  resources: { cpu: "100m", memory: "64Mi", gpu: false },
  max_concurrent: 2,
  timeouts_ms: { default: 1000 },
};

function invoker(handlers: AgentDefinition["handlers"]): AgentInvoker {
  return new AgentInvoker({ manifest, handlers }, createLogger({ agentName: "t", destination: false }));
}

const req = (action: string, constraints: Record<string, unknown> = {}) => ({ action, context: {}, constraints });

describe("agent runtime", () => {
  it("refuses handlers for actions the manifest does not declare", () => {
    expect(() => invoker({ other: () => 1 })).toThrow(/not among the manifest's capabilities/);
  });

  it("caps concurrency at max_concurrent with AIP_ERR_SOCKET_BUSY", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const inv = invoker({ slow: async () => gate });
    const a = inv.invoke(req("slow"));
    const b = inv.invoke(req("slow"));
    const c = await inv.invoke(req("slow"));
    expect(c.status === "error" && c.error.type).toBe("AIP_ERR_SOCKET_BUSY");
    release();
    expect((await a).status).toBe("success");
    expect((await b).status).toBe("success");
    expect((await inv.invoke(req("slow"))).status).toBe("success");
  });

  it("aborts the handler's signal at the deadline and answers AIP_ERR_TIMEOUT", async () => {
    let reason: unknown;
    const inv = invoker({
      slow: (_r, ctx) =>
        new Promise((resolve) =>
          ctx.signal.addEventListener("abort", () => {
            reason = ctx.signal.reason;
            resolve("late");
          }),
        ),
    });
    const res = await inv.invoke(req("slow", { timeout_ms: 30 }));
    expect(res.status === "error" && res.error.type).toBe("AIP_ERR_TIMEOUT");
    expect(reason).toBeInstanceOf(AipError);
    expect(inv.inflight).toBe(0);
  });

  it("turns a thrown exception into AIP_ERR_UNKNOWN without the stack", async () => {
    const res = await invoker({
      boom: () => {
        throw new TypeError("x is undefined at foo.ts:3");
      },
    }).invoke(req("boom"));
    expect(res.status === "error" && res.error.type).toBe("AIP_ERR_UNKNOWN");
    expect(JSON.stringify(res)).not.toContain("foo.ts");
  });

  it("passes AipErrors through and collects warnings and stage timings", async () => {
    const inv = invoker({
      boom: () => {
        throw new AipError("AIP_ERR_PARSE", "Unexpected token (3:4)", { extensions: { line: 3, column: 4 } });
      },
      warn: (_r, ctx) => {
        ctx.timer.mark("slice");
        ctx.warn("AIP_ERR_CONTEXT_TRUNCATED", "trimmed 10 lines", { trimmed_lines: 10 });
        return { ok: true };
      },
    });
    const bad = await inv.invoke({ ...req("boom"), trace_id: "tr-1" });
    expect(bad).toMatchObject({
      status: "error",
      trace_id: "tr-1",
      error: { type: "AIP_ERR_PARSE", line: 3, instance: "tr-1" },
    });
    const good = await inv.invoke(req("warn"));
    expect(good.status).toBe("success");
    if (good.status !== "success") return;
    expect(good.warnings?.[0]).toMatchObject({ type: "AIP_ERR_CONTEXT_TRUNCATED", status: 413, trimmed_lines: 10 });
    expect(Object.keys(good.timings_ms ?? {})).toEqual(["accept", "slice", "handler"]);
  });

  it("uses the manifest's default timeout when the request has none", async () => {
    const inv = invoker({ go: (_r, ctx) => ctx.deadline - Date.now() });
    const res = await inv.invoke(req("go"));
    expect(res.status === "success" && (res.payload as number)).toBeGreaterThan(900);
  });
});
