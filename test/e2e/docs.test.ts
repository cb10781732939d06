/**
 * Every fenced example in README.md and docs/*.md is accounted for here (the table and the blocks:
 * test/e2e/lib/docs-examples.ts). Each block is run as written, with `./run/aip.sock`, `run/aip.log` and
 * placeholders (`path/to/your-agent`, `TRACE`, the model path) pointed at the suite's own agency and
 * files; `aip` is `node dist/scripts/aip.js`. Where a line cannot run on this machine (systemd is not
 * PID 1, no container registry is reachable, it would change the host), what it depends on is checked
 * instead and the entry says why. Blocks run by a suite of their own name it. A new block without an
 * entry fails the first test.
 *
 * The docs suites, split so that two test workers share them out: this one (the table, the operations
 * examples on a running `aip up`, the bench and test commands), docs-commands.test.ts (the commands
 * that need no agency: conformance, vetting, the systemd install) and docs-start.test.ts (`npm start`
 * and the code agents).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ABUSES, CONTROLS } from "../../bench/lib/neighbour.js";
import { httpRequest, invokeHttp } from "../../protocol/transport/client.js";
import { DUMMY, ROOT, jsonLines, pidAlive, until } from "../helpers.js";
import { FIXTURE_AGENT, manifestFor } from "../orchestrator/harness.js";
import { AIP, startRealAgency, type RealAgency } from "../reliability/lib/agency.js";
import { EXAMPLES, block, blocks, commands, inTurns, sh, shOnce } from "./lib/docs-examples.js";

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
          // Vetting's own examples: docs-commands.test.ts; these are the operations on a running agency.
          vetting: "off",
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
    // The first line (all scenarios) is the list below, run once.
    const run = shOnce();
    // Each line runs as written, a few at a time: each is a process that prints and exits.
    await inTurns(
      benchLines.map((line) => async () => {
        const abuses = /AIP_HOSTILE_ABUSES=(\S+)/.exec(line)?.[1];
        for (const a of abuses?.split(",") ?? []) expect([...ABUSES, ...CONTROLS], line).toContain(a);
        // Only the scenario list is checked: --dry-run prints what would run and runs none.
        const cmd = line.replace(/npm run bench(?: --)?/, "node dist/bench/main.js");
        expect(cmd, line).toContain("node dist/bench/main.js");
        const out = await run(`${cmd} --dry-run`);
        const only = /--only (\S+)/.exec(line)?.[1]?.split(",");
        for (const name of only ?? []) expect(out, line).toMatch(new RegExp(`^${name}\\t`, "m"));
      }),
    );
    // The list of scenarios the docs give for --only is the real one.
    const listed = /one scenario: ([\w, -]+)/.exec(block("docs/performance.md", "npm run bench "))![1]!.split(/,\s*/);
    const real = (await run("node dist/bench/main.js --dry-run"))
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split("\t")[0]);
    expect(listed.sort()).toEqual(real.sort());
  }, 180_000);
});
