/**
 * How far an agent's heap grows between V8's full collections (agents/lib/runtime/heap.ts): as far as
 * fits under the collect-after share of the limit, 3× at most; a real agent with the heap flags the
 * orchestrator gives it stops running a full mark-compact every one or two 1 MiB requests.
 */
import { spawn } from "node:child_process";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitForSocket } from "../../../../protocol/transport/client.js";
import { HEAP_GROWING_PERCENT, SMALL_HEAP_BYTES, heapGrowingPercent } from "../../../../agents/lib/runtime/heap.js";
import { nodeOptionsFor } from "../../../../orchestrator/core/memory.js";
import { DUMMY, tempDir } from "../../../helpers.js";

const MiB = 1024 * 1024;

describe("heapGrowingPercent", () => {
  it("3× a small live heap, less as it fills, V8's own (0) near the ceiling and for large heaps", () => {
    expect(heapGrowingPercent(9 * MiB, 90 * MiB, 45 * MiB)).toBe(HEAP_GROWING_PERCENT);
    expect(heapGrowingPercent(30 * MiB, 90 * MiB, 45 * MiB)).toBe(50);
    expect(heapGrowingPercent(42 * MiB, 90 * MiB, 45 * MiB)).toBe(0); // 7 % would fit: under the minimum
    expect(heapGrowingPercent(60 * MiB, 90 * MiB, 45 * MiB)).toBe(0);
    expect(heapGrowingPercent(9 * MiB, SMALL_HEAP_BYTES + 1, 2048 * MiB)).toBe(0);
    expect(heapGrowingPercent(0, 90 * MiB, 45 * MiB)).toBe(HEAP_GROWING_PERCENT);
  });
});

describe("a real agent with its manifest's heap", () => {
  it("agent-dummy answers 120 requests of 1 MiB with at most a few full collections (V8's small-heap factor: one every 1-2)", async () => {
    const t = tempDir("aiph-");
    const socket = join(t.dir, "d.sock");
    // The heap flags the orchestrator gives agent-dummy (manifests/dummy.json: 128Mi), and V8's GC trace.
    const child = spawn(process.execPath, ["--trace-gc", DUMMY, "--listen", socket], {
      env: { ...process.env, NODE_OPTIONS: nodeOptionsFor("128Mi", undefined), AIP_LOG_FILE: join(t.dir, "log") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let trace = "";
    child.stdout.on("data", (d: Buffer) => (trace += d.toString()));
    try {
      await waitForSocket(socket, 20_000, () => child.exitCode === null);
      const shell = JSON.stringify({ action: "echo", context: { source_code: "" }, constraints: {} });
      const line = shell.replace('"source_code":""', `"source_code":"${"a\\n".repeat((MiB - shell.length) / 3)}"`);
      const c = connect(socket);
      let got = "";
      const answers: string[] = [];
      let wake: (() => void) | undefined;
      c.on("data", (d: Buffer) => {
        got += d.toString();
        let nl;
        while ((nl = got.indexOf("\n")) !== -1) {
          answers.push(got.slice(0, nl));
          got = got.slice(nl + 1);
          wake?.();
        }
      });
      const before = (trace.match(/Mark-Compact/g) ?? []).length;
      for (let i = 0; i < 120; i++) {
        const n = answers.length;
        const answered = new Promise<void>((resolve) => (wake = () => answers.length > n && resolve()));
        c.write(`${line}\n`);
        await answered;
      }
      c.destroy();
      const last = JSON.parse(answers.at(-1)!) as { status: string; payload: { context_lines: number } };
      expect(last.status).toBe("success");
      expect(last.payload.context_lines).toBeGreaterThan(300_000);
      const fullCollections = (trace.match(/Mark-Compact/g) ?? []).length - before;
      // Without heap.ts: 18-20 in 120 such requests; with it, 4.
      expect(fullCollections).toBeLessThanOrEqual(9);
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      t.cleanup();
    }
  }, 60_000);
});
