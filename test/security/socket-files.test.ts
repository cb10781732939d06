/**
 * A stopped `aip up` leaves no socket file behind: not its own (main, admin), not its agents', not a
 * warm standby's, and not the one a promoted standby serves on (renamed onto the agent's path, it used
 * to stay after SIGTERM). Driven as a real process, its agent killed with SIGKILL so that the standby
 * takes over, then the agency stopped with SIGTERM.
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { httpRequest } from "../../protocol/transport/client.js";
import { DIST, tempDir, writeDummyConfig } from "../helpers.js";

const t = tempDir("aipsec-sock-");
afterAll(() => t.cleanup());

describe("socket files after stop", () => {
  it("nothing is left in the socket directories after a promoted standby and SIGTERM", async () => {
    const config = writeDummyConfig(t.dir, {
      state_dir: join(t.dir, "state"),
      vetting: "off",
      limits: { warm_standby: "all", restart_initial_ms: 60_000 },
    });
    const child = spawn(process.execPath, [join(DIST, "scripts/aip.js"), "up", "--config", config], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const events: Record<string, unknown>[] = [];
    const waiters: { event: string; n: number; resolve: () => void }[] = [];
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (!line.startsWith("{")) return;
      events.push(JSON.parse(line) as Record<string, unknown>);
      for (const w of waiters.splice(0)) {
        if (events.filter((e) => e.event === w.event).length >= w.n) w.resolve();
        else waiters.push(w);
      }
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const seen = (event: string, n = 1): Promise<void> =>
      events.filter((e) => e.event === event).length >= n
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ event, n, resolve }));
    try {
      await seen("ready");
      await seen("standby_ready");
      const socket = join(t.dir, "aip.sock");
      const health = JSON.parse((await httpRequest(socket, { path: "/healthz" })).body);
      const pid = health.agents.dummy.pid as number;
      process.kill(pid, "SIGKILL");
      // The standby took over (its socket renamed onto the agent's) and a new standby is ready.
      await seen("standby_ready", 2);
      const after = JSON.parse((await httpRequest(socket, { path: "/healthz" })).body);
      expect(after.agents.dummy.pid).not.toBe(pid);
      expect(readdirSync(join(t.dir, "agents")).sort()).toEqual([".dummy.standby", "dummy.sock", "orchestrator.lock"]);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(readdirSync(join(t.dir, "agents"))).toEqual([]);
      expect(readdirSync(t.dir).sort()).toEqual(["agency.json", "agents", "state"]);
    } finally {
      child.kill("SIGKILL");
    }
  }, 90_000);
});
