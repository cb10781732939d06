/**
 * The docs' examples that start agencies of their own, run as written (the harness and the table of
 * every example: test/e2e/lib/docs-examples.ts, checked by docs.test.ts): the requests of docs/agents.md
 * to the code agents, README's `npm start` and docs/agents.md's `AIP_MODEL=… npm start`.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it, type ExpectStatic } from "vitest";
import { httpRequest, invokeHttp, waitForSocket } from "../../protocol/transport/client.js";
import { ROOT, suiteManifest, tempDir } from "../helpers.js";
import { tinyModel } from "../agents/lib/llm/tiny-model.js";
import { startRealAgency, type RealAgency } from "../reliability/lib/agency.js";
import { block, commands, sh } from "./lib/docs-examples.js";

// Three agencies of their own (sockets, agent sockets and state each in a temp dir), side by side: each
// start mostly waits on its agents' loads, and one after another they made the longest of the docs suites.
describe.concurrent("the examples that start an agency", () => {
  describe("the code agents behind `aip up`", () => {
    let agency: RealAgency;
    beforeAll(async () => {
      // One request each: no standby process waits to take over an agent.
      agency = await startRealAgency({ warm_standby: "off" }, (dir) => ({
        // The documented requests set no deadline: the suites' default stands in for the editor's.
        agents: ["summarize", "testgen", "complete-lite"].map((name) => ({
          name,
          command: [join(ROOT, `dist/agents/${name}/main.js`)],
          manifest: suiteManifest(name, dir),
        })),
        workspace_roots: [ROOT],
        vetting: "off", // vetting's own examples: docs-commands.test.ts
      }));
    }, 240_000);
    afterAll(() => agency?.cleanup());
    const curl = async (start: string): Promise<Record<string, any>> =>
      JSON.parse(
        await sh(block("docs/agents.md", start).replaceAll("./run/aip.sock", agency.socket), {}, 120_000),
      ) as Record<string, any>;

    it("summarize protocol/util/paths.ts names its exports", async ({ expect }) => {
      const a = await curl(`curl --unix-socket ./run/aip.sock http://aip/v1/invoke -d '{"action":"summarize"`);
      expect(a, JSON.stringify(a.error)).toMatchObject({ status: "success", agent: "summarize" });
      expect(JSON.stringify(a.payload)).toContain("isInside");
    });

    it("testgen isInside writes a test importing it, with the payload keys the docs show", async ({ expect }) => {
      const a = await curl(`curl --unix-socket ./run/aip.sock http://aip/v1/invoke -d '{"action":"testgen"`);
      expect(a, JSON.stringify(a.error)).toMatchObject({ status: "success", agent: "testgen" });
      expect(JSON.stringify(a.payload)).toMatch(/import \{[^}]*isInside/);
      // The documented shape (jsonc: comments and "…" dropped) has the keys of the real answer.
      const shown = JSON.parse(
        "{" +
          block("docs/agents.md", '"tests": {')
            .replace(/\/\/.*$/gm, "")
            .replace(/"reason": "(?:[^"\\]|\\.)*"/, '"reason": ""')
            .replace(/,(\s*[}\]])/g, "$1") +
          "}",
      ) as { tests: Record<string, unknown>; checks: Record<string, unknown> };
      for (const part of ["tests", "checks"] as const)
        expect(Object.keys(a.payload[part]).sort(), part).toEqual(expect.arrayContaining(Object.keys(shown[part])));
    }, 150_000);

    it("complete after `this.` offers the class's members", async ({ expect }) => {
      const a = await curl(`curl --unix-socket ./run/aip.sock http://aip/v1/invoke -d '{"action":"complete"`);
      expect(a, JSON.stringify(a.error)).toMatchObject({ status: "success" });
      const labels = (a.payload.items as { label: string }[]).map((i) => i.label);
      expect(labels).toEqual(expect.arrayContaining(["n", "f"]));
    });
  });

  describe("npm start (README), and with a model (docs/agents.md)", () => {
    /**
     * Run `line` (an `npm start`) on a temp socket until it logs `agency ready`, check its echo and the
     * banner's example, and return /healthz once `settled` holds.
     */
    async function startAndProbe(
      expect: ExpectStatic,
      line: string,
      extraEnv: Record<string, string>,
      settled: (healthz: Record<string, any>) => boolean,
    ): Promise<Record<string, any>> {
      const t = tempDir("aipstart-");
      const socket = join(t.dir, "aip.sock");
      const child = spawn("bash", ["-c", line], {
        cwd: ROOT,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, AIP_SOCKET: socket, AIP_AGENT_SOCKET_DIR: join(t.dir, "agents"), ...extraEnv },
      });
      let out = "";
      const ready = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "agency ready" in 240 s:\n${out.slice(-2000)}`)), 240_000);
        const seen = (d: Buffer): void => {
          out += d.toString();
          if (out.includes("agency ready")) {
            clearTimeout(timer);
            resolve();
          }
        };
        child.stdout.on("data", seen);
        child.stderr.on("data", seen);
        child.once("exit", (code, signal) => {
          clearTimeout(timer);
          reject(new Error(`npm start exited (${code ?? signal}) before "agency ready":\n${out.slice(-2000)}`));
        });
      });
      try {
        await ready;
        await waitForSocket(socket, 10_000);
        const echo = await invokeHttp(socket, { action: "echo", context: { source_code: "a\nb" }, constraints: {} });
        expect(echo.json).toMatchObject({ status: "success", payload: { context_lines: 2 } });
        // The banner's own example, run as printed: it names an action this config serves.
        const tryLine = /try: (curl .*)$/m.exec(out)?.[1];
        expect(tryLine).toContain(socket);
        expect(JSON.parse(await sh(tryLine!))).toMatchObject({ status: "success" });
        // The first health probe after start tells a degraded agent apart: wait for `settled` (a model's load
        // under the suite's load can take minutes).
        let h: Record<string, any> = {};
        for (const end = Date.now() + 180_000; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
          h = JSON.parse((await httpRequest(socket, { path: "/healthz" })).body) as Record<string, any>;
          if (settled(h)) break;
        }
        return Object.assign(h, { output: out });
      } finally {
        // npm, and the agency under it, until every process of the group has exited (the agency stops its
        // agents first), before its directory goes.
        const group = (signal: NodeJS.Signals | 0): boolean => {
          try {
            process.kill(-child.pid!, signal);
            return true;
          } catch {
            return false;
          }
        };
        group("SIGTERM");
        for (const end = Date.now() + 30_000; group(0) && Date.now() < end;)
          await new Promise((r) => setTimeout(r, 100));
        group("SIGKILL");
        t.cleanup();
      }
    }

    it("README: npm start serves the bundled agents on the socket (complete degraded without a model)", async ({
      expect,
    }) => {
      const line = commands(block("README.md", "npm ci && npm start"))[0]!
        .replace(/^npm ci && /, "")
        .replace(/\s+#.*$/, "");
      expect(line).toBe("npm start");
      const h = await startAndProbe(expect, line, {}, (x) => x.agents?.complete?.degraded === true);
      expect(Object.keys(h.agents).sort()).toEqual([
        "complete",
        "complete-lite",
        "diagnose",
        "dummy",
        "search",
        "summarize",
        "testgen",
      ]);
      expect(h.agents.complete, h.output).toMatchObject({
        degraded: true,
        degraded_reason: expect.stringMatching(/AIP_MODEL/),
      });
    }, 360_000);

    it("docs/agents.md: AIP_MODEL=… npm start loads the model into complete", async ({ expect }) => {
      const [line] = commands(block("docs/agents.md", "AIP_MODEL="));
      const model = /^AIP_MODEL=(\S+)/.exec(line!)![1]!;
      const h = await startAndProbe(
        expect,
        line!.replace(model, tinyModel()),
        // The same executables are vetted by the README's start beside this one (and `aip vet` in
        // docs-commands.test.ts); here the example is the model's load, so it is not vetted again.
        { AIP_MODEL_THREADS: "1", AIP_MODEL_CONTEXT: "1024", AIP_WARMUP_KEYSTROKES: "0", AIP_VETTING: "off" },
        (x) => x.agents?.complete?.status === "healthy" && x.agents?.complete?.degraded === false,
      );
      expect(h.agents.complete, h.output).toMatchObject({ status: "healthy", degraded: false });
    }, 360_000);
  });
});
