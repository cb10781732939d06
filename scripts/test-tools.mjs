#!/usr/bin/env node
/* global process, console */
/**
 * The system tools the test suite runs for real (strace for vetting, bubblewrap for the sandbox, neovim
 * for the editor test, pytest for Python workspaces, …), checked before `npm test` (its `pretest`), so
 * that a fresh machine gets one list of what is missing and the one command that installs it, not
 * many unrelated failures.
 *
 *   node scripts/test-tools.mjs             exit 1 with the missing tools and the install command
 *   node scripts/test-tools.mjs --packages  the Debian packages still missing, one line (for scripts)
 *
 * scripts/install-test-tools (root, Debian/Ubuntu) installs them; .ci/run calls it.
 */
import { spawnSync } from "node:child_process";

/** What the tests run, how to tell it is there, and the Debian package that provides it. */
export const TEST_TOOLS = [
  { tool: "strace", pkg: "strace" },
  { tool: "socat", pkg: "socat" },
  { tool: "curl", pkg: "curl" },
  { tool: "jq", pkg: "jq" },
  { tool: "readelf", pkg: "binutils" },
  { tool: "gcc", pkg: "gcc" },
  { tool: "systemd-analyze", pkg: "systemd" },
  { tool: "bwrap", pkg: "bubblewrap" },
  { tool: "nvim", pkg: "neovim" },
  { tool: "promtool", pkg: "prometheus" },
  { tool: "/usr/bin/python3 -m pytest", pkg: "python3-pytest", check: ["/usr/bin/python3", "-c", "import pytest"] },
  { tool: "/usr/bin/python3 jedi", pkg: "python3-jedi", check: ["/usr/bin/python3", "-c", "import jedi"] },
];

const present = ({ tool, check }) => {
  const [cmd, ...args] = check ?? ["sh", "-c", `command -v ${tool}`];
  return spawnSync(cmd, args, { stdio: "ignore" }).status === 0;
};

const missing = TEST_TOOLS.filter((t) => !present(t));
if (process.argv.includes("--packages")) {
  console.log([...new Set(missing.map((t) => t.pkg))].join(" "));
} else if (missing.length > 0) {
  const pkgs = [...new Set(missing.map((t) => t.pkg))].join(" ");
  console.error(
    [
      `npm test: ${missing.length} system tool${missing.length > 1 ? "s" : ""} the tests run ${missing.length > 1 ? "are" : "is"} missing: ${missing.map((t) => t.tool).join(", ")}.`,
      `Install them (Debian/Ubuntu): sudo apt-get install -y ${pkgs}`,
      "or, as root: scripts/install-test-tools   (see docs/troubleshooting.md)",
    ].join("\n"),
  );
  process.exit(1);
}
