import { tmpdir } from "node:os";
import { defineConfig } from "vitest/config";

// `npm run test:reliability`: the full reliability suites (>= 100,000 fuzzed inputs, faults under load).
// `npm test` runs the same files at a small scale (AIP_RELIABILITY unset).
export default defineConfig({
  test: {
    include: ["test/reliability/**/*.test.ts"],
    env: { AIP_RELIABILITY: "full", AIP_WORKSPACE_ROOTS: [import.meta.dirname, "/tmp", tmpdir()].join(":") },
    testTimeout: 600_000,
    hookTimeout: 120_000,
    // One suite at a time: they measure memory and count every request.
    maxWorkers: 1,
    fileParallelism: false,
  },
});
