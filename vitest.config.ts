import { tmpdir } from "node:os";
import { defineConfig } from "vitest/config";
import { sharedWorkerFiles } from "./test/isolation.js";

// .ci/run sets AIP_VITEST_JSON to collect counts for its closing "N passed, N failed" line.
const json = process.env.AIP_VITEST_JSON;
// Files that only compute in this process share a worker; test/isolation.ts says which and why.
const shared = sharedWorkerFiles();

export default defineConfig({
  test: {
    // Suites read this checkout and temp dirs as workspaces; agents refuse roots outside this list
    // (docs/security.md). Tests of the refusal set their own.
    env: { AIP_WORKSPACE_ROOTS: [import.meta.dirname, "/tmp", tmpdir()].join(":") },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real processes and sockets; two cores are shared by all of them.
    maxWorkers: 2,
    reporters: json ? ["default", ["json", { outputFile: json }]] : ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: ["test/reliability/**", ...shared],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: "unit-shared", include: shared, isolate: false, sequence: { groupOrder: 0 } },
      },
      // The short reliability runs (the full ones: `npm run test:reliability`) load both cores: each
      // runs alone, after the others, so that no timing-sensitive check is measured under its load.
      {
        extends: true,
        test: {
          name: "reliability-fuzz",
          include: ["test/reliability/fuzz.test.ts"],
          testTimeout: 180_000,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: "reliability-fair-share",
          include: ["test/reliability/fair-share.test.ts"],
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: "reliability-faults",
          include: ["test/reliability/faults.test.ts"],
          testTimeout: 180_000,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
