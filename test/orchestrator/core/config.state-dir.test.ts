import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../orchestrator/core/config.js";
import { ROOT } from "../../helpers.js";
import { startRealAgency } from "../../reliability/lib/agency.js";

const agents = [{ name: "dummy", command: ["dist/agents/dummy/main.js"], manifest: "manifests/dummy.json" }];

describe("state_dir derivation", () => {
  it("embedded: beside the socket, wherever the socket is", () => {
    expect(parseConfig({ agents }, "/opt/aip").stateDir).toBe("/opt/aip/run/state");
    expect(parseConfig({ agents, socket: "/tmp/x/y/aip.sock" }, ROOT).stateDir).toBe("/tmp/x/y/state");
    expect(parseConfig({ agents }, ROOT, { AIP_SOCKET: "/tmp/t1/aip.sock" }).stateDir).toBe("/tmp/t1/state");
    // The agents' sockets too: a config that names only its socket keeps everything beside it.
    expect(parseConfig({ agents, socket: "/tmp/x/y/aip.sock" }, ROOT).agentSocketDir).toBe("/tmp/x/y/agents");
    expect(parseConfig({ agents }, "/opt/aip").agentSocketDir).toBe("/opt/aip/run/agents");
  });

  it("systemd: $STATE_DIRECTORY (StateDirectory=), else /var/lib/aip", () => {
    expect(parseConfig({ agents, mode: "systemd" }, ROOT).stateDir).toBe("/var/lib/aip");
    expect(
      parseConfig({ agents }, ROOT, { AIP_MODE: "systemd", STATE_DIRECTORY: "/var/lib/aip2:/var/lib/other" }).stateDir,
    ).toBe("/var/lib/aip2");
  });

  it("an explicit state_dir or AIP_STATE_DIR wins", () => {
    expect(parseConfig({ agents, state_dir: "st" }, "/opt/aip").stateDir).toBe("/opt/aip/st");
    expect(parseConfig({ agents, mode: "systemd" }, ROOT, { AIP_STATE_DIR: "/srv/aip" }).stateDir).toBe("/srv/aip");
  });
});

describe("aip up without a state_dir keeps its state beside its socket", () => {
  it("the canary state goes to the temp agency's state/, never to the checkout's run/", async () => {
    const checkoutState = join(ROOT, "run/state/canary.json");
    const before = existsSync(checkoutState) ? statSync(checkoutState).mtimeMs : null;
    const agency = await startRealAgency();
    try {
      await agency.terminate();
      const state = join(agency.dir, "state", "canary.json");
      expect(JSON.parse(readFileSync(state, "utf8"))).toEqual({ version: 1, agents: {} });
    } finally {
      await agency.cleanup();
    }
    expect(existsSync(checkoutState) ? statSync(checkoutState).mtimeMs : null).toBe(before);
  }, 60_000);
});
