import { defineConfig } from "vitest/config";

// .ci/run sets AIP_VITEST_JSON to collect counts for its closing "N passed, N failed" line.
const json = process.env.AIP_VITEST_JSON;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real processes and sockets; two cores are shared by all of them.
    maxWorkers: 2,
    reporters: json ? ["default", ["json", { outputFile: json }]] : ["default"],
  },
});
