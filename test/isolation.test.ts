/** Which test files share a vitest worker (test/isolation.ts): only those that compute in this process. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIRST_USE, isolationReason, sharedWorkerFiles, testFiles } from "./isolation.js";
import { ROOT } from "./helpers.js";

const clean = `import { expect, it } from "vitest";
import { percentile } from "../../../protocol/util/percentile.js";
import { tempDir } from "../../helpers.js";
it("p50", () => expect(percentile([1, 2, 3], 50)).toBe(2));
`;

describe("isolationReason", () => {
  it("lets a file that only computes, with the shared helpers, share a worker", () => {
    expect(isolationReason("test/protocol/util/x.test.ts", clean)).toBeUndefined();
  });

  it.each([
    ["process.env.SOME_VAR = '1';", "changes the environment: process.env.SOME_VAR ="],
    ["delete process.env.SOME_VAR;", "changes the environment: delete process.env"],
    ["await withEnv({ A: '1' }, f);", "changes the environment: withEnv("],
    ["vi.useFakeTimers();", "mocks or fakes: vi.useFakeTimers"],
    ['vi.mock("../x.js");', "mocks or fakes: vi.mock"],
    ["process.chdir(dir);", "changes the process: process.chdir("],
    ["const before = process.cpuUsage();", "measures the process: process.cpuUsage"],
    ["const c = spawn(process.execPath, []);", "starts processes, threads, timers or sockets: spawn"],
    ["setInterval(tick, 10);", "starts processes, threads, timers or sockets: setInterval"],
    ["server.listen(path);", "starts processes, threads, timers or sockets: .listen("],
    ["const a = servedAgent(SEARCH);", "runs agents through the suite's helpers: servedAgent"],
    ["const t = await startAgency(cfg);", "runs agents through the suite's helpers: startAgency"],
    ['const py = "/usr/bin/python3";', "runs an external tool or a model: python3"],
  ])("keeps a file that does `%s` isolated", (line, why) => {
    expect(isolationReason("test/protocol/util/x.test.ts", `${clean}${line}\n`)).toBe(why);
  });

  it("holds a test module a file imports to the same marks, but not code quoted in a fixture", () => {
    const importing = `import { indexedWorkspace } from "./indexed-workspace.js";\n${clean}`;
    expect(isolationReason("test/agents/search/x.test.ts", importing)).toBeUndefined();
    const quoted = `${clean}const fixture = \`\nimport { now } from "./clock.js";\n\`;\n`;
    expect(isolationReason("test/agents/testgen/x.test.ts", quoted)).toBeUndefined();
    const viaModule = `import { render } from "./helpers.js";\n${clean}`;
    expect(isolationReason("test/tools/systemd/x.test.ts", viaModule)).toMatch(
      /^imports test\/tools\/systemd\/helpers\.ts, which /,
    );
    const viaHarness = `import { startAgency } from "../harness.js";\n${clean}`;
    expect(isolationReason("test/orchestrator/pool/x.test.ts", viaHarness)).toMatch(
      /helpers: (startAgency|harness\.js)/,
    );
  });

  it("keeps the reliability runs and the first-use files isolated", () => {
    expect(isolationReason("test/reliability/fuzz.test.ts", clean)).toBe("a reliability run loads both cores");
    for (const f of FIRST_USE) {
      expect(existsSync(join(ROOT, f)), f).toBe(true);
      expect(isolationReason(f, clean)).toBe("asserts on a module's first-use state");
    }
  });
});

describe("sharedWorkerFiles", () => {
  it("picks in-process files from the suite and leaves process-starting ones isolated", () => {
    const shared = sharedWorkerFiles();
    expect(shared).toContain("test/protocol/util/percentile.test.ts");
    expect(shared).not.toContain("test/agents/complete/warm-start.test.ts");
    expect(shared).not.toContain("test/isolation.test.ts");
    expect(shared.every((f) => testFiles().includes(f))).toBe(true);
  });
});
