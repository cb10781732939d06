/** The hostile scenario's neighbour (bench/lib/neighbour.ts): the CPU-only control sends nothing and stops. */
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ABUSES, CONTROLS, neighbour } from "../../bench/lib/neighbour.js";
import { tempDir, until } from "../helpers.js";

describe("neighbour control cpu_burn", () => {
  it("is not an abuse, takes CPU on its own threads, opens no connection, and stops", async () => {
    expect(CONTROLS).toContain("cpu_burn");
    expect(ABUSES as readonly string[]).not.toContain("cpu_burn");
    const t = tempDir("aipnb-");
    const socket = join(t.dir, "s.sock");
    let connections = 0;
    const server = createServer((c) => {
      connections++;
      c.destroy();
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    const before = process.cpuUsage();
    process.env.AIP_HOSTILE_BURN_THREADS = "2";
    try {
      const n = neighbour(socket, t.dir, ["cpu_burn"]);
      // Wait (not sleep-and-hope): until the burning threads have used 50 ms of CPU.
      await until(() => process.cpuUsage(before).user >= 50_000, 20_000, "50 ms of the threads' CPU");
      const counts = await n.stop();
      expect(counts).toEqual({ cpu_burn: 2 });
      expect(process.cpuUsage(before).user).toBeGreaterThanOrEqual(50_000);
      // Stopped: the process's CPU no longer grows (the threads were terminated).
      const stopped = process.cpuUsage();
      await new Promise((r) => setTimeout(r, 200));
      expect(process.cpuUsage(stopped).user).toBeLessThan(100_000);
      expect(connections).toBe(0);
    } finally {
      delete process.env.AIP_HOSTILE_BURN_THREADS;
      server.close();
      t.cleanup();
    }
  });
});
