/** Findings 6 and 7 (docs/security.md): latest-wins per client connection; one orchestrator per agent socket dir. */
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitForSocket } from "../../protocol/transport/client.js";
import { DIST, ROOT, ndjsonSession, tempDir } from "../helpers.js";
import { echo, startAgency, until, type Agency } from "../orchestrator/harness.js";

let agency: Agency | undefined;
afterEach(async () => {
  await agency?.stop();
  agency = undefined;
});

describe("latest wins is per client", () => {
  it("two clients that both omit client_id (or send the same one) never cancel each other", async () => {
    agency = await startAgency([{ name: "ide" }]);
    const alice = await ndjsonSession(agency.socket);
    const bob = await ndjsonSession(agency.socket);
    try {
      for (const client_id of [undefined, "copied-id"]) {
        const c = { document_id: "file:///shared.ts", delay_ms: 300, ...(client_id ? { client_id } : {}) };
        const a = alice.send(echo({ trace_id: `alice-${client_id ?? "none"}`, constraints: c }) as never);
        await until(() => agency!.orchestrator.agents[0]!.inflight === 1, 20_000, "alice in flight");
        const b = bob.send(echo({ trace_id: `bob-${client_id ?? "none"}`, constraints: c }) as never);
        expect((await a).status).toBe("success");
        expect((await b).status).toBe("success");
      }
      // The same client still supersedes its own older request.
      const first = alice.send(
        echo({ trace_id: "alice-old", constraints: { document_id: "d", delay_ms: 5000 } }) as never,
      );
      await until(() => agency!.orchestrator.agents[0]!.inflight === 1, 20_000, "old in flight");
      expect(
        (await alice.send(echo({ trace_id: "alice-new", constraints: { document_id: "d" } }) as never)).status,
      ).toBe("success");
      expect((await first).error).toMatchObject({ type: "AIP_ERR_CANCELLED", superseded_by: "alice-new" });
    } finally {
      alice.close();
      bob.close();
    }
  });
});

describe("one orchestrator per agent socket directory", () => {
  it("a second `aip up` on the same agent socket dir says so and exits 1 before vetting anything", async () => {
    const t = tempDir("aiplock-");
    const aip = join(DIST, "scripts/aip.js");
    const config = (n: number): string => {
      const file = join(t.dir, `agency-${n}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          socket: join(t.dir, `aip-${n}.sock`),
          agent_socket_dir: join(t.dir, "agents"),
          state_dir: join(t.dir, `state-${n}`),
          vetting: n === 1 ? "off" : "required",
          agents: [
            {
              name: "dummy",
              command: [join(DIST, "agents/dummy/main.js")],
              manifest: join(ROOT, "manifests/dummy.json"),
            },
          ],
        }),
      );
      return file;
    };
    const first = spawn(process.execPath, [aip, "up", "--config", config(1), "--log", join(t.dir, "first.log")], {
      stdio: "ignore",
    });
    try {
      await waitForSocket(join(t.dir, "aip-1.sock"), 30_000, () => first.exitCode === null);
      const started = performance.now();
      const second = spawn(process.execPath, [aip, "up", "--config", config(2), "--log", join(t.dir, "second.log")], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      second.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((r) => second.on("exit", (c) => r(c)));
      const ms = performance.now() - started;
      console.log(`second aip up exited ${code} after ${Math.round(ms)} ms`);
      expect(code).toBe(1);
      expect(stderr).toContain(`another orchestrator (pid ${first.pid}) already uses this agent socket directory`);
      // It stopped before its orchestrator existed: no log line at all, so nothing was vetted or started.
      expect(existsSync(join(t.dir, "second.log"))).toBe(false);
      expect(existsSync(join(t.dir, "aip-2.sock"))).toBe(false);
      // The first one still serves.
      expect(first.exitCode).toBeNull();
    } finally {
      first.kill("SIGTERM");
      await new Promise((r) => first.once("exit", r));
      t.cleanup();
    }
    // Two orchestrator processes start from cold: the suite's load can stretch that past the default limit.
  }, 120_000);
});
