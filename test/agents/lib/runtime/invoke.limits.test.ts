/**
 * The agent runtime's own bounds: a stack overflow is a clear 422 (AIP_ERR_TOO_COMPLEX) and the agent
 * goes on; a heap near its limit sheds with AIP_ERR_SOCKET_BUSY; in embedded mode the heap limit comes
 * from the manifest's memory.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRequest } from "../../../../protocol/transport/client.js";
import { createLogger } from "../../../../protocol/util/log.js";
import { AgentInvoker, type HeapProbe } from "../../../../agents/lib/runtime/invoke.js";
import type { AgentDefinition } from "../../../../agents/lib/runtime/types.js";
import { heapFlags, nodeOptionsFor } from "../../../../orchestrator/core/memory.js";
import { SUMMARIZE, startAgent, type RunningAgent } from "../../code-helpers.js";
import { startAgency, type Agency } from "../../../orchestrator/harness.js";

const manifest = {
  aip: "1" as const,
  name: "t",
  version: "0.0.1",
  description: "test",
  capabilities: ["go", "deep"],
  languages: ["*"],
  resources: { cpu: "100m", memory: "64Mi", gpu: false },
  max_concurrent: 4,
  timeouts_ms: { default: 5000 },
};
const req = (action: string) => ({ action, context: {}, constraints: {} });

function invoker(handlers: AgentDefinition["handlers"], heap?: HeapProbe): AgentInvoker {
  return new AgentInvoker({ manifest, handlers }, createLogger({ agentName: "t", destination: false }), heap);
}

describe("stack overflow guard", () => {
  it("a handler that runs out of stack answers 422 AIP_ERR_TOO_COMPLEX, and the next request is served", async () => {
    const dive = (n: number): number => (n === 0 ? 0 : 1 + dive(n - 1));
    const inv = invoker({ deep: () => dive(1e7), go: () => ({ ok: true }) });
    const r = await inv.invoke(req("deep"));
    expect(r.status === "error" && r.error).toMatchObject({ type: "AIP_ERR_TOO_COMPLEX", status: 422 });
    expect((await inv.invoke(req("go"))).status).toBe("success");
  });

  it("summarize: 50,000 nested brackets and 20,000 nested functions get an answer or a 422, never a 500", async () => {
    const agent: RunningAgent = await startAgent(SUMMARIZE);
    try {
      const sources = [
        `const a = ${"[".repeat(50_000)}${"]".repeat(50_000)};\n`,
        `${"function f() {\n".repeat(20_000)}${"}\n".repeat(20_000)}`,
      ];
      for (const source_code of sources) {
        const r = await agent.invoke({
          action: "summarize",
          context: { source_code, language: "typescript" },
          constraints: { timeout_ms: 15_000 },
        });
        if (r.status === "error") expect(r.error.status, JSON.stringify(r.error).slice(0, 300)).toBe(422);
      }
      const ok = await agent.invoke({
        action: "summarize",
        context: { source_code: "export const a = 1;\n", language: "typescript" },
        constraints: {},
      });
      expect(ok.status).toBe("success");
    } finally {
      await agent.stop();
    }
  }, 60_000);
});

describe("memory", () => {
  it("sheds with AIP_ERR_SOCKET_BUSY above 85% of the heap limit, after one collection did not help", async () => {
    let used = 90;
    let collected = 0;
    const inv = invoker(
      { go: () => ({ ok: true }) },
      { used: () => used * 1024 * 1024, limit: () => 100 * 1024 * 1024, collect: () => void collected++ },
    );
    const r = await inv.invoke(req("go"));
    expect(r.status === "error" && r.error).toMatchObject({
      type: "AIP_ERR_SOCKET_BUSY",
      detail: "Agent t is short of memory: heap 90 of its 100 MiB limit in use",
    });
    expect(collected).toBe(1);
    used = 40;
    expect((await inv.invoke(req("go"))).status).toBe("success");
  });

  it("a collection that frees the heap lets the request in", async () => {
    let used = 95;
    const inv = invoker(
      { go: () => ({ ok: true }) },
      { used: () => used * 1024 * 1024, limit: () => 100 * 1024 * 1024, collect: () => void (used = 30) },
    );
    expect((await inv.invoke(req("go"))).status).toBe("success");
  });

  it("the heap growing percent is set from the heap in use at start and after each forced collection (heap.ts)", async () => {
    let used = 95 * 1024 * 1024;
    const set: number[] = [];
    const inv = invoker(
      { go: () => ({ ok: true }) },
      {
        used: () => used,
        limit: () => 100 * 1024 * 1024,
        collect: () => void (used = 30 * 1024 * 1024),
        setGrowth: (p) => void set.push(p),
      },
    );
    inv.tuneHeapGrowth();
    expect(set).toEqual([0]); // 95 of 100 MiB in use: nothing fits under 50
    expect((await inv.invoke(req("go"))).status).toBe("success");
    expect(set).toEqual([0, 66]); // collected before admitting it: 30 MiB live, 50 MiB ceiling
  });

  it("heap flags from the manifest's memory: young and old generation within 75% of it; an operator's own setting wins", () => {
    expect(heapFlags("128Mi")).toEqual({ oldSpaceMiB: 72, semiSpaceMiB: 6 });
    expect(heapFlags("1Gi")).toEqual({ oldSpaceMiB: 704, semiSpaceMiB: 16 });
    expect(nodeOptionsFor("256Mi", "--enable-source-maps")).toBe(
      "--enable-source-maps --max-old-space-size=144 --max-semi-space-size=12 --expose-gc",
    );
    expect(nodeOptionsFor("256Mi", "--max-old-space-size=4096")).toBe("--max-old-space-size=4096");
  });
});

describe("embedded mode", () => {
  let agency: Agency;
  beforeAll(async () => {
    agency = await startAgency([{ name: "small", max_concurrent: 4 }]); // manifest memory: 64Mi
  }, 60_000);
  afterAll(async () => {
    await agency?.stop();
  });

  it("the agent runs with a heap limit from its manifest's 64Mi (V8 reports ~48 MiB, not Node's default of gigabytes)", async () => {
    const agent = agency.orchestrator.agents[0]!;
    const h = JSON.parse((await httpRequest(agent.socketPath, { path: "/healthz" })).body) as {
      memory: { heap_limit_mib: number };
    };
    expect(h.memory.heap_limit_mib).toBeGreaterThan(40);
    expect(h.memory.heap_limit_mib).toBeLessThanOrEqual(64 * 0.75 + 4);
  });
});
