/**
 * Every fenced example in README.md and docs/*.md is accounted for here. Each block is run as written,
 * with `./run/aip.sock`, `run/aip.log` and placeholders (`path/to/your-agent`, `TRACE`, the model path)
 * pointed at this test's own agency and files; `aip` is `node dist/scripts/aip.js`. Where a line cannot
 * run on this machine (systemd is not PID 1, no container registry is reachable, it would change the
 * host), what it depends on is checked instead and the entry says why. Blocks run by a suite of their own
 * name it. A new block without an entry fails the first test.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ABUSES, CONTROLS } from "../../bench/lib/neighbour.js";
import { httpRequest, invokeHttp, waitForSocket } from "../../protocol/transport/client.js";
import { DUMMY, ROOT, jsonLines, pidAlive, suiteManifest, tempDir, until } from "../helpers.js";
import { tinyModel } from "../agents/lib/llm/tiny-model.js";
import { FIXTURE_AGENT, manifestFor } from "../orchestrator/harness.js";
import { AIP, startRealAgency, type RealAgency } from "../reliability/lib/agency.js";

const exec = promisify(execFile);

interface Block {
  file: string;
  line: number;
  lang: string;
  body: string;
}

/** Every fenced block of README.md and docs/*.md. */
function blocks(): Block[] {
  const files = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)].filter((f) =>
    f.endsWith(".md"),
  );
  const out: Block[] = [];
  for (const file of files) {
    const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(\w*)\s*$/.exec(lines[i]!);
      if (!open) continue;
      const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
      out.push({ file, line: i + 1, lang: open[1]!, body: lines.slice(i + 1, end).join("\n") + "\n" });
      i = end;
    }
  }
  return out;
}

/** The block of `file` whose body starts with `start`. */
function block(file: string, start: string): string {
  const b = blocks().filter((x) => x.file === file && x.body.startsWith(start));
  if (b.length !== 1) throw new Error(`${file}: ${b.length} blocks start with ${JSON.stringify(start)}`);
  return b[0]!.body;
}

/**
 * How each block is verified: "here" (this file runs it), a test file that runs it, or why it cannot
 * run on this machine (and what is checked instead, here).
 */
const EXAMPLES: { file: string; start: string; how: string }[] = [
  {
    file: "README.md",
    start: "npm ci && npm start",
    how: "here: npm start; npm ci and npm test are what .ci/run runs",
  },
  { file: "README.md", start: "curl -s --unix-socket ./run/aip.sock", how: "test/e2e/readme.test.ts" },
  { file: "README.md", start: 'echo \'{"action":"echo"', how: "test/e2e/readme.test.ts" },
  { file: "docs/aip-1.md", start: "curl --unix-socket ./run/aip.sock", how: "here" },
  { file: "docs/aip-1.md", start: "npm run conformance -- path/to/your-agent", how: "here" },
  {
    file: "docs/agents.md",
    start: "npm run conformance -- dist/agents/search",
    how: "here, limited with --only to the good-request checks (the whole battery with these requests: test/agents/search/main.test.ts, test/agents/testgen/main.test.ts)",
  },
  {
    file: "docs/agents.md",
    start: 'curl --unix-socket ./run/aip.sock http://aip/v1/invoke -d \'{"action":"summarize"',
    how: "here",
  },
  {
    file: "docs/agents.md",
    start: 'curl --unix-socket ./run/aip.sock http://aip/v1/invoke -d \'{"action":"testgen"',
    how: "here",
  },
  { file: "docs/agents.md", start: '"tests": {', how: "here: the keys of a real testgen answer" },
  {
    file: "docs/agents.md",
    start: 'curl --unix-socket ./run/aip.sock http://aip/v1/invoke -d \'{"action":"complete"',
    how: "here",
  },
  { file: "docs/agents.md", start: "AIP_MODEL=", how: "here, with the tiny test model" },
  { file: "docs/integrations.md", start: "local aip_client", how: "test/tools/aip/lsp.nvim.test.ts" },
  { file: "docs/integrations.md", start: '{ "command": "aip"', how: "test/e2e/integrations.test.ts" },
  { file: "docs/integrations.md", start: "[language-server.aip]", how: "test/e2e/integrations.test.ts" },
  { file: "docs/integrations.md", start: '{\n  "glspc.server.command"', how: "test/e2e/integrations.test.ts" },
  { file: "docs/integrations.md", start: "(with-eval-after-load 'eglot", how: "test/e2e/integrations.test.ts" },
  { file: "docs/integrations.md", start: '{\n  "mcpServers"', how: "test/e2e/integrations.test.ts" },
  { file: "docs/operations.md", start: "aip canary start", how: "here" },
  { file: "docs/operations.md", start: "aip health ", how: "here" },
  {
    file: "docs/operations.md",
    start: '{\n  "agents": [\n    {\n      "name": "complete"',
    how: "test/orchestrator/model-engine.test.ts parses it with parseConfig",
  },
  { file: "docs/operations.md", start: "# failed requests", how: "here, on the log of `aip up --log`" },
  { file: "docs/operations.md", start: "node dist/scripts/aip.js vet", how: "here" },
  {
    file: "docs/operations.md",
    start: "for a in dist/agents/*/main.js",
    how: "here: the vet loop, --dry-run and DESTDIR run as written; the installs that change the host run with --dry-run; usermod needs the installed group",
  },
  {
    file: "docs/operations.md",
    start: "systemctl status",
    how: "systemd is not PID 1 here: the aip and curl lines run against this test's agency; systemctl is not run",
  },
  {
    file: "docs/operations.md",
    start: "journalctl",
    how: "no journal here: each jq filter runs on journal entries made from this test's agency log",
  },
  {
    file: "docs/operations.md",
    start: "sudo systemctl disable",
    how: "it would change the host: every file it removes is checked to be one install-systemd installs (DESTDIR)",
  },
  {
    file: "docs/operations.md",
    start: "docker build",
    how: "no container registry is reachable here: the Dockerfile and the kustomization are checked by test/deploy/kubernetes.test.ts",
  },
  {
    file: "docs/operations.md",
    start: "sudo tools/container/build-local-base.sh",
    how: "needs root, podman and debootstrap (minutes; run by hand, figures in the docs): test/deploy/kubernetes.test.ts checks the script's syntax and that it stands in for the Dockerfile's base",
  },
  {
    file: "docs/reliability.md",
    start: "npm run test:reliability",
    how: "here: both scripts exist (running them from a test would run the test suite inside itself)",
  },
  {
    file: "docs/performance.md",
    start: "npm run bench ",
    how: "here, with --dry-run (benchmarks are not run by tests)",
  },
  { file: "docs/performance.md", start: "apt-get install -y nginx haproxy", how: "here, with --dry-run" },
  { file: "docs/performance.md", start: "AIP_HOSTILE_ABUSES", how: "here, with --dry-run and the abuse names" },
  {
    file: "docs/performance.md",
    start: "cp -a dist /tmp/base/dist",
    how: "here, the bench line with --dry-run and the abuse names (the copy, a baseline build, is not made)",
  },
];

/** Run a shell script (bash, -euo pipefail) with `aip` on PATH as this checkout's CLI. */
async function sh(script: string, env: Record<string, string> = {}, timeout = 60_000): Promise<string> {
  const bin = join(ROOT, "node_modules/.cache/agency/docs-bin");
  if (!existsSync(join(bin, "aip"))) {
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "aip"), `#!/bin/sh\nexec "${process.execPath}" "${AIP}" "$@"\n`, { mode: 0o755 });
  }
  const { stdout } = await exec("bash", ["-euo", "pipefail", "-c", script], {
    cwd: ROOT,
    encoding: "utf8",
    timeout,
    maxBuffer: 16 << 20,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, ...env },
  });
  return stdout;
}

/** `sudo` dropped when the test already runs as root (CI), and the line skipped otherwise. */
const asRoot = (line: string): string | undefined =>
  process.getuid?.() === 0 ? line.replace(/^sudo /, "") : line.startsWith("sudo ") ? undefined : line;

/** The command lines of a block: comments and blank lines dropped, continuations joined. */
const commands = (body: string): string[] =>
  body
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));

describe("every example in README.md and docs/", () => {
  it("has an entry saying how it is verified, and each entry names a block", () => {
    const all = blocks();
    expect(all.length).toBeGreaterThanOrEqual(EXAMPLES.length);
    for (const b of all) {
      const owners = EXAMPLES.filter((e) => e.file === b.file && b.body.startsWith(e.start));
      expect(owners, `${b.file}:${b.line} has ${owners.length} entries:\n${b.body}`).toHaveLength(1);
    }
    for (const e of EXAMPLES) {
      expect(() => block(e.file, e.start), `${e.file}: ${e.start}`).not.toThrow();
      const suite = /^test\/\S+\.test\.ts$/.exec(e.how)?.[0];
      if (suite) expect(readFileSync(join(ROOT, suite), "utf8"), suite).toMatch(/README|docs\/integrations\.md/);
    }
  });

  describe("on a real `aip up` over agent-dummy", () => {
    let agency: RealAgency;
    const canaryManifest = (dir: string): string => join(dir, "dummy-1.1.0.json");
    beforeAll(async () => {
      agency = await startRealAgency({}, (dir) => {
        writeFileSync(canaryManifest(dir), JSON.stringify(manifestFor({ name: "dummy", version: "1.1.0" })));
        return {
          agents: [
            {
              name: "dummy",
              command: [DUMMY],
              manifest: join(ROOT, "manifests/dummy.json"),
              versions: { "1.1.0": { command: [FIXTURE_AGENT], env: { FIXTURE_MANIFEST: canaryManifest(dir) } } },
            },
          ],
          workspace_roots: [ROOT],
        };
      });
    }, 240_000);
    afterAll(() => agency?.cleanup());
    const env = (): Record<string, string> => ({ AIP_SOCKET: agency.socket });
    const onSocket = (text: string): string => text.replaceAll("./run/aip.sock", agency.socket);

    it("docs/aip-1.md: the curl and the socat example answer the echo", async () => {
      const [curl, socat] = commands(block("docs/aip-1.md", "curl --unix-socket ./run/aip.sock"));
      expect(curl).toMatch(/^curl /);
      expect(socat).toMatch(/\| socat /);
      expect(JSON.parse(await sh(onSocket(curl!), env()))).toMatchObject({
        status: "success",
        agent: "dummy",
        payload: { context_lines: 2 },
      });
      expect(JSON.parse(await sh(onSocket(socat!), env()))).toMatchObject({
        status: "success",
        agent: "dummy",
        payload: { context_lines: 0 },
      });
    });

    it("docs/operations.md: the canary example starts, shows, promotes and rolls back 1.1.0", async () => {
      const [start, status, promote, rollback] = commands(block("docs/operations.md", "aip canary start"));
      await sh(start!, env(), 90_000);
      const shown = await sh(status!, env());
      expect(shown).toContain("1.1.0");
      expect(shown).toMatch(/dummy\s+1\.1\.0\s+canary\s+5%/);
      await sh(promote!, env());
      let h = JSON.parse((await httpRequest(agency.socket, { path: "/healthz" })).body) as Record<string, any>;
      expect(h.agents.dummy.version).toBe("1.1.0");
      await sh(rollback!, env());
      h = JSON.parse((await httpRequest(agency.socket, { path: "/healthz" })).body) as Record<string, any>;
      expect(h.agents.dummy.version).toBe("1.0.0");
      expect((await invokeHttp(agency.socket, { action: "echo", context: {}, constraints: {} })).json).toMatchObject({
        status: "success",
        version: "1.0.0",
      });
    }, 150_000);

    it("docs/operations.md: the jq examples find a failed request, one trace and the dummy's lifecycle in the log", async () => {
      const failed = await invokeHttp(agency.socket, { action: "no-such-action", context: {}, constraints: {} });
      expect(failed.json).toMatchObject({ status: "error", error: { type: "AIP_ERR_NO_ROUTE" } });
      const ok = await invokeHttp(agency.socket, { action: "echo", context: {}, constraints: {} });
      const trace = ok.json.trace_id as string;
      // The request line is written after the answer: wait for it.
      await until(() => readFileSync(agency.logFile, "utf8").includes(`"trace_id":"${trace}"`), 20_000, "its log line");
      const [failures, oneTrace, lifecycle] = commands(block("docs/operations.md", "# failed requests")).map((c) =>
        c.replaceAll("run/aip.log", agency.logFile).replace('"TRACE"', `"${trace}"`),
      );
      expect(jsonLines(await sh(failures!))).toContainEqual(
        expect.objectContaining({ trace_id: failed.json.trace_id, outcome: "AIP_ERR_NO_ROUTE" }),
      );
      const traced = jsonLines(await sh(oneTrace!));
      expect(traced.length).toBeGreaterThanOrEqual(1);
      expect(traced.every((l) => l.trace_id === trace)).toBe(true);
      expect(traced.some((l) => l.event === "request")).toBe(true);
      const events = jsonLines(await sh(lifecycle!)).map((l) => l.event);
      expect(events).toContain("agent_ready");
    });

    it("docs/operations.md: the journalctl filters select from journal entries of this log", async () => {
      await invokeHttp(agency.socket, { action: "no-such-action", context: {}, constraints: {} });
      // What the journal holds: the agency's lines, plus an error line as an agent writes one.
      const logLines = readFileSync(agency.logFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .concat(JSON.stringify({ level: "error", timestamp: "t", agent_name: "testgen", event: "e", msg: "m" }));
      const cat = join(agency.dir, "journal.txt"); // -o cat: the messages
      writeFileSync(cat, logLines.join("\n") + "\n");
      const journal = join(agency.dir, "journal.json"); // -o json: one object per entry, the line in MESSAGE
      writeFileSync(journal, logLines.map((l) => JSON.stringify({ MESSAGE: l })).join("\n") + "\n");
      const errors = join(agency.dir, "journal-err.txt"); // -p err -o cat: the error messages only
      writeFileSync(errors, logLines.filter((l) => l.includes('"level":"error"')).join("\n") + "\n");
      const lines = commands(block("docs/operations.md", "journalctl"));
      for (const line of lines) {
        const filter = line.slice(line.indexOf("| jq"));
        const input = line.includes("-o json") ? journal : line.includes("-p err") ? errors : cat;
        const out = await sh(`cat '${input}' ${filter.replace("TRACE-ID", "none")}`);
        if (line.includes('"testgen"') || line.includes("-p err")) expect(out, line).toContain("testgen");
        if (line.includes('.event == "request"')) expect(jsonLines(out).length, line).toBeGreaterThan(0);
      }
      expect(lines).toHaveLength(5);
    });

    it("docs/operations.md: aip health, check, reload and the metrics line, as written", async () => {
      const [health, strict, check, reload, metrics] = commands(block("docs/operations.md", "aip health ")).map((c) =>
        onSocket(c.replace(/\s+#.*$/, "")),
      );
      expect(await sh(health!, env())).toMatch(/dummy\s+.*healthy/);
      await sh(strict!, env());
      await sh(check!, env());
      const before = agency.process().pid;
      const reloaded = await sh(reload!, env(), 90_000);
      await agency.adoptServing();
      // "reloaded: orchestrator OLD → NEW"
      const pid = Number(/→ (\d+)/.exec(reloaded)?.[1]);
      expect(pid).not.toBe(before);
      expect(pidAlive(pid)).toBe(true);
      await invokeHttp(agency.socket, { action: "echo", context: {}, constraints: {} });
      const m = await sh(metrics!, env());
      expect(m).toMatch(/^aip_requests_total\{/m);
      expect(m).toMatch(/^aip_build_info\{/m);
    }, 120_000);

    it("docs/operations.md: the systemctl block's aip and curl lines", async () => {
      const lines = commands(block("docs/operations.md", "systemctl status"));
      const health = lines.find((l) => l.startsWith("node /opt/aip/dist/scripts/aip.js health"))!;
      const curl = lines.find((l) => l.startsWith("curl"))!;
      const here = (l: string): string =>
        l.replace("/opt/aip/dist/scripts/aip.js", AIP).replaceAll("/run/aip/aip.sock", agency.socket);
      expect(await sh(here(health))).toContain("dummy");
      expect(JSON.parse(await sh(here(curl)))).toMatchObject({ agents: { dummy: { status: "healthy" } } });
    });
  });

  describe("the code agents behind `aip up`", () => {
    let agency: RealAgency;
    beforeAll(async () => {
      agency = await startRealAgency({}, (dir) => ({
        // The documented requests set no deadline: the suites' default stands in for the editor's.
        agents: ["summarize", "testgen", "complete-lite"].map((name) => ({
          name,
          command: [join(ROOT, `dist/agents/${name}/main.js`)],
          manifest: suiteManifest(name, dir),
        })),
        workspace_roots: [ROOT],
        vetting: "off", // vetting's own examples run below
      }));
    }, 240_000);
    afterAll(() => agency?.cleanup());
    const curl = async (start: string): Promise<Record<string, any>> =>
      JSON.parse(
        await sh(block("docs/agents.md", start).replaceAll("./run/aip.sock", agency.socket), {}, 120_000),
      ) as Record<string, any>;

    it("summarize protocol/util/paths.ts names its exports", async () => {
      const a = await curl(`curl --unix-socket ./run/aip.sock http://aip/v1/invoke -d '{"action":"summarize"`);
      expect(a, JSON.stringify(a.error)).toMatchObject({ status: "success", agent: "summarize" });
      expect(JSON.stringify(a.payload)).toContain("isInside");
    });

    it("testgen isInside writes a test importing it, with the payload keys the docs show", async () => {
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

    it("complete after `this.` offers the class's members", async () => {
      const a = await curl(`curl --unix-socket ./run/aip.sock http://aip/v1/invoke -d '{"action":"complete"`);
      expect(a, JSON.stringify(a.error)).toMatchObject({ status: "success" });
      const labels = (a.payload.items as { label: string }[]).map((i) => i.label);
      expect(labels).toEqual(expect.arrayContaining(["n", "f"]));
    });
  });

  it("docs/aip-1.md and docs/agents.md: the conformance commands pass", async () => {
    const own = block("docs/aip-1.md", "npm run conformance -- path/to/your-agent").replace(
      "path/to/your-agent",
      "dist/agents/dummy/main.js",
    );
    // The whole battery runs against each bundled agent in test/agents/*/main.test.ts (the dummy's too, with
    // these request files for search and testgen); here each line runs as written on this checkout, limited
    // to the checks that send the good request.
    for (const cmd of [
      ...commands(own),
      ...commands(block("docs/agents.md", "npm run conformance -- dist/agents/search")),
    ]) {
      const out = await sh(`${cmd} --only "good request succeeds"`, {}, 240_000);
      expect(out, cmd).toMatch(/^PASS {2}one-shot: a good request succeeds/m);
      expect(out, cmd).toMatch(/^PASS {2}socket HTTP: a good request succeeds/m);
      expect(out, cmd).toMatch(/[1-9]\d* passed, 0 failed/);
    }
  }, 720_000);

  it("docs/operations.md: aip vet, as a table and as JSON", async () => {
    const [table, json] = commands(block("docs/operations.md", "node dist/scripts/aip.js vet"));
    expect(await sh(table!.replace(/\s+#.*$/, ""), {}, 120_000)).toMatch(/pass/i);
    const reasons = JSON.parse(
      await sh(json!.replace("./my-agent", "dist/agents/dummy/main.js").replace(/\s+#.*$/, ""), {}, 120_000),
    );
    expect(Array.isArray(reasons)).toBe(true);
  }, 240_000);

  it("docs/operations.md: the systemd install lines (vet loop, --dry-run, DESTDIR) and the uninstall's file list", async () => {
    const t = tempDir("aipdocs-");
    try {
      const lines = commands(block("docs/operations.md", "for a in dist/agents/*/main.js")).map((l) =>
        l.replace(/\s+#.*$/, ""),
      );
      await sh(lines[0]!, {}, 300_000);
      const stage = join(t.dir, "stage");
      for (const line of lines.slice(1)) {
        if (line.includes("usermod")) continue; // needs the aip-users group the real install creates
        // The model the docs name is not on this machine: the tiny test model stands in for it.
        const here = line.replace("/var/lib/aip-models/coder-1.5b-q4_k_m.gguf", tinyModel());
        if (here.includes("--model")) {
          // Staged, as DESTDIR does: the model path must reach the model-backed agents' drop-ins.
          const staged = join(t.dir, "staged-model");
          await sh(`DESTDIR=${staged} ${here.replace(/^sudo /, "")}`, {}, 120_000);
          const dropIn = readFileSync(
            join(staged, "etc/systemd/system/aip-agent@complete.service.d/50-aip.conf"),
            "utf8",
          );
          expect(dropIn, here).toContain(`AIP_MODEL=${tinyModel()}`);
          continue;
        }
        const cmd = here.includes("DESTDIR=")
          ? here.replace("/tmp/stage", stage)
          : asRoot(here.includes("--dry-run") ? here : `${here} --dry-run`);
        if (cmd === undefined) continue;
        const out = await sh(cmd, {}, 120_000);
        if (cmd.includes("--dry-run")) expect(out, cmd).toContain("aip-orchestrator");
      }
      const removed = commands(block("docs/operations.md", "sudo systemctl disable"))
        .join(" ")
        .split(/\s+/)
        .filter((w) => /^\/(etc|usr)\//.test(w));
      expect(removed.length).toBeGreaterThanOrEqual(5);
      for (const path of removed) {
        const found = path.includes("*")
          ? readdirSync(join(stage, path.slice(0, path.lastIndexOf("/")))).some((f) =>
              new RegExp(
                `^${path
                  .slice(path.lastIndexOf("/") + 1)
                  .replace(/[.@]/g, "\\$&")
                  .replace("*", ".*")}$`,
              ).test(f),
            )
          : existsSync(join(stage, path));
        expect(found, `uninstall removes ${path}, which the install stages`).toBe(true);
      }
    } finally {
      t.cleanup();
    }
  }, 420_000);

  it("docs/performance.md and docs/reliability.md: the bench and test commands name what exists", async () => {
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }
    ).scripts;
    for (const line of commands(block("docs/reliability.md", "npm run test:reliability"))) {
      const name = /^npm (?:run )?([\w:]+)/.exec(line)![1]!;
      expect(scripts[name], line).toBeDefined();
    }
    const benchLines = [
      ...commands(block("docs/performance.md", "npm run bench ")),
      ...commands(block("docs/performance.md", "apt-get install -y nginx haproxy")).filter((l) => l.startsWith("npm")),
      ...commands(block("docs/performance.md", "AIP_HOSTILE_ABUSES")),
      ...commands(block("docs/performance.md", "cp -a dist /tmp/base/dist")).filter((l) => !l.startsWith("cp ")),
    ].map((l) => l.replace(/\s+#.*$/, "").replace("--socket PATH", "--socket /tmp/x.sock"));
    expect(benchLines.length).toBeGreaterThanOrEqual(6);
    for (const line of benchLines) {
      const abuses = /AIP_HOSTILE_ABUSES=(\S+)/.exec(line)?.[1];
      for (const a of abuses?.split(",") ?? []) expect([...ABUSES, ...CONTROLS], line).toContain(a);
      // Only the scenario list is checked: --dry-run prints what would run and runs none.
      const run = line.replace(/npm run bench(?: --)?/, "node dist/bench/main.js");
      expect(run, line).toContain("node dist/bench/main.js");
      const out = await sh(`${run} --dry-run`);
      const only = /--only (\S+)/.exec(line)?.[1]?.split(",");
      for (const name of only ?? []) expect(out, line).toMatch(new RegExp(`^${name}\\t`, "m"));
    }
    // The list of scenarios the docs give for --only is the real one.
    const listed = /one scenario: ([\w, -]+)/.exec(block("docs/performance.md", "npm run bench "))![1]!.split(/,\s*/);
    const real = (await sh("node dist/bench/main.js --dry-run"))
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split("\t")[0]);
    expect(listed.sort()).toEqual(real.sort());
  }, 180_000);

  describe("npm start (README), and with a model (docs/agents.md)", () => {
    const t = tempDir("aipstart-");
    afterAll(() => t.cleanup());

    /** Run `line` (an `npm start`) on a temp socket until it logs `agency ready`; return /healthz. */
    async function startAndProbe(
      line: string,
      extraEnv: Record<string, string>,
      settled: (healthz: Record<string, any>) => boolean,
    ): Promise<Record<string, any>> {
      const socket = join(t.dir, "aip.sock");
      const child = spawn("bash", ["-c", line], {
        cwd: ROOT,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, AIP_SOCKET: socket, AIP_AGENT_SOCKET_DIR: join(t.dir, "agents"), ...extraEnv },
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      try {
        const end = Date.now() + 240_000;
        while (!out.includes("agency ready")) {
          if (Date.now() > end || child.exitCode !== null) throw new Error(`no "agency ready":\n${out.slice(-2000)}`);
          await new Promise((r) => setTimeout(r, 100));
        }
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
        // npm, and the agency under it, until every process of the group has exited (the agency stops
        // its agents first): the next start takes the same agent socket directory's lock.
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
      }
    }

    it("README: npm start serves the bundled agents on the socket (complete degraded without a model)", async () => {
      const line = commands(block("README.md", "npm ci && npm start"))[0]!
        .replace(/^npm ci && /, "")
        .replace(/\s+#.*$/, "");
      expect(line).toBe("npm start");
      const h = await startAndProbe(line, {}, (x) => x.agents?.complete?.degraded === true);
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

    it("docs/agents.md: AIP_MODEL=… npm start loads the model into complete", async () => {
      const [line] = commands(block("docs/agents.md", "AIP_MODEL="));
      const model = /^AIP_MODEL=(\S+)/.exec(line!)![1]!;
      const h = await startAndProbe(
        line!.replace(model, tinyModel()),
        { AIP_MODEL_THREADS: "1", AIP_MODEL_CONTEXT: "1024", AIP_WARMUP_KEYSTROKES: "0" },
        (x) => x.agents?.complete?.status === "healthy" && x.agents?.complete?.degraded === false,
      );
      expect(h.agents.complete, h.output).toMatchObject({ status: "healthy", degraded: false });
    }, 360_000);
  });
});
