import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cpuQuota, cpuWeight, missingExecutables, renderAll } from "../../../tools/systemd/render.js";
import { ROOT, tempDir } from "../../helpers.js";
import { bundledAgents, fakePackage, manifest, sh } from "./helpers.js";

const file = (files: { path: string; content: string }[], path: string): string => {
  const f = files.find((x) => x.path === path);
  if (!f) throw new Error(`not rendered: ${path}; got ${files.map((x) => x.path).join(", ")}`);
  return f.content;
};
const lines = (text: string): string[] => text.split("\n");

/** The hardening set docs/operations.md names, as it must appear in every agent drop-in. */
const REQUIRED = [
  "RestrictAddressFamilies=AF_UNIX",
  "ProtectSystem=strict",
  "ProtectHome=read-only",
  "PrivateTmp=yes",
  "NoNewPrivileges=yes",
  "CapabilityBoundingSet=",
  "SystemCallFilter=@system-service",
  "ProtectKernelTunables=yes",
  "ProtectKernelModules=yes",
  "ProtectKernelLogs=yes",
  "RestrictNamespaces=yes",
  "LockPersonality=yes",
  "UMask=0007",
];

describe("aip systemd render", () => {
  const t = tempDir("aipsd-");
  afterAll(() => t.cleanup());

  it("the checked-in units are exactly what the templates render with the defaults (golden)", () => {
    const files = renderAll({ installDir: "/opt/aip", node: "/usr/bin/node" });
    expect(file(files, "aip-orchestrator.service")).toBe(
      readFileSync(join(ROOT, "systemd/aip-orchestrator.service"), "utf8"),
    );
    expect(file(files, "aip-agent@.service")).toBe(readFileSync(join(ROOT, "systemd/aip-agent@.service"), "utf8"));
    expect(file(files, "aip-orchestrator.socket")).toBe(
      readFileSync(join(ROOT, "systemd/aip-orchestrator.socket"), "utf8"),
    );
  });

  it("the orchestrator is Type=notify with a watchdog, on the socket systemd holds (aip-orchestrator.socket)", () => {
    const files = renderAll({ installDir: "/opt/aip", node: "/usr/bin/node" });
    const unit = lines(file(files, "aip-orchestrator.service"));
    expect(unit).toEqual(
      expect.arrayContaining([
        "Type=notify",
        "NotifyAccess=all",
        "WatchdogSec=30",
        "Requires=aip-orchestrator.socket",
        "After=aip-orchestrator.socket systemd-tmpfiles-setup.service",
      ]),
    );
    expect(unit.some((l) => l.startsWith("Environment=AIP_HEALTH_PORT"))).toBe(false);
    const socket = lines(file(files, "aip-orchestrator.socket"));
    expect(socket).toEqual(
      expect.arrayContaining([
        "ListenStream=/run/aip/aip.sock",
        "SocketUser=aip",
        "SocketGroup=aip-users",
        "SocketMode=0660",
        "Service=aip-orchestrator.service",
        "WantedBy=sockets.target",
      ]),
    );
  });

  it("--probe-port opens loopback only, for the probes", () => {
    const unit = lines(
      file(renderAll({ installDir: "/opt/aip", node: "/usr/bin/node", probePort: 9464 }), "aip-orchestrator.service"),
    );
    expect(unit).toEqual(
      expect.arrayContaining([
        "Environment=AIP_HEALTH_PORT=9464",
        "PrivateNetwork=no",
        "RestrictAddressFamilies=AF_INET",
        "IPAddressAllow=localhost",
        "IPAddressDeny=any",
      ]),
    );
  });

  it("renders every production agent, diagnose among them, by default", () => {
    const files = renderAll({ installDir: "/opt/aip", node: "/usr/bin/node" });
    expect(file(files, "agents.list").split("\n").filter(Boolean).sort()).toEqual(
      ["complete", "complete-lite", "diagnose", "search", "summarize", "testgen"].sort(),
    );
    expect(files.map((f) => f.path)).toContain("aip-agent@diagnose.service.d/50-aip.conf");
  });

  it("never renders the echo test agent unless asked for by name", () => {
    const files = renderAll({ installDir: "/opt/aip", node: "/usr/bin/node" });
    expect(files.some((f) => f.path.includes("dummy"))).toBe(false);
    expect(file(files, "agents.list")).not.toContain("dummy");
    expect(file(renderAll({ installDir: "/opt/aip", node: "/usr/bin/node", agents: ["dummy"] }), "agents.list")).toBe(
      "dummy\n",
    );
  });

  it("--model sets AIP_MODEL for the agents that load a model, and nowhere else", () => {
    const files = renderAll({ installDir: "/opt/aip", node: "/usr/bin/node", model: "/var/lib/aip-models/coder.gguf" });
    for (const name of bundledAgents()) {
      const has = lines(file(files, `aip-agent@${name}.service.d/50-aip.conf`)).includes(
        "Environment=AIP_MODEL=/var/lib/aip-models/coder.gguf",
      );
      expect(has, name).toBe(["complete", "summarize", "diagnose"].includes(name));
    }
    expect(lines(file(files, "aip-agent@.service"))).toContain("EnvironmentFile=-/etc/aip/%i.env");
  });

  it("names each ExecStart (and model) that is missing", () => {
    const problems = missingExecutables(
      renderAll({ installDir: "/nonexistent/aip", node: "/nonexistent/node", model: "/nonexistent/m.gguf" }),
    );
    expect(problems).toContain("aip-orchestrator.service: ExecStart /nonexistent/node does not exist");
    expect(problems).toContain(
      "aip-orchestrator.service: ExecStart /nonexistent/aip/dist/scripts/aip.js does not exist",
    );
    expect(problems).toContain(
      "aip-agent@search.service.d/50-aip.conf: ExecStart /nonexistent/aip/dist/agents/search/main.js does not exist",
    );
    expect(problems).toContain(
      "aip-agent@complete.service.d/50-aip.conf: AIP_MODEL /nonexistent/m.gguf does not exist",
    );
    expect(missingExecutables(renderAll({ installDir: ROOT, node: process.execPath }))).toEqual([]);
  });

  it("the orchestrator unit: systemd-mode command line, SIGUSR1 reload, Restart=always with start limits", () => {
    const unit = lines(
      file(renderAll({ installDir: "/srv/aip", node: "/usr/local/bin/node" }), "aip-orchestrator.service"),
    );
    expect(unit).toContain("ExecStart=/usr/local/bin/node /srv/aip/dist/scripts/aip.js up --mode systemd");
    expect(unit).toContain("ExecReload=/bin/kill -USR1 $MAINPID");
    expect(unit).toEqual(
      expect.arrayContaining(["Restart=always", "StartLimitIntervalSec=60", "StartLimitBurst=5", "Group=aip-users"]),
    );
    expect(
      unit.some(
        (l) =>
          l.startsWith("Environment=") &&
          l.includes("AIP_SOCKET=/run/aip/aip.sock") &&
          l.includes("AIP_SOCKET_GROUP=aip-users"),
      ),
    ).toBe(true);
  });

  it("a drop-in per agent from its manifest: MemoryMax, CPUQuota, CPUWeight, IOWeight, ExecStart, hardening", () => {
    const files = renderAll({ installDir: "/opt/aip", node: "/usr/bin/node" });
    const dropIn = lines(file(files, "aip-agent@summarize.service.d/50-aip.conf"));
    // manifests/summarize.json: cpu 200m, memory 256Mi, gpu false
    expect(dropIn).toEqual(
      expect.arrayContaining([
        "MemoryMax=268435456",
        "CPUQuota=20%",
        "CPUWeight=20",
        "IOWeight=50",
        "PrivateDevices=yes",
      ]),
    );
    expect(dropIn).toEqual(
      expect.arrayContaining([
        "ExecStart=",
        "ExecStart=/opt/aip/dist/agents/summarize/main.js --listen /run/aip/agents/%i.sock",
      ]),
    );
    expect(dropIn).toEqual(expect.arrayContaining(REQUIRED));
    expect(file(files, "agents.list")).toBe(
      bundledAgents()
        .map((n) => `${n}\n`)
        .join(""),
    );
  });

  it("maps CPU quantities: quota is the share of one CPU, weight 100 = one CPU", () => {
    expect([cpuQuota("100m"), cpuQuota("250m"), cpuQuota("2"), cpuQuota("1.5"), cpuQuota("1m")]).toEqual([
      "10%",
      "25%",
      "200%",
      "150%",
      "1%",
    ]);
    expect([cpuWeight("100m"), cpuWeight("1"), cpuWeight("4"), cpuWeight("1m"), cpuWeight("1000")]).toEqual([
      10, 100, 400, 1, 10000,
    ]);
  });

  it("a GPU agent gets the NVIDIA devices instead of PrivateDevices; --versioned names the canary instance", () => {
    const root = fakePackage(join(t.dir, "pkg"), [
      manifest("infer", { gpu: true, cpu: "2", memory: "4Gi" }),
      manifest("plain"),
    ]);
    const files = renderAll({ installDir: "/opt/aip", node: "/usr/bin/node", root, versioned: true });
    const gpu = lines(file(files, "aip-agent@infer-1.2.3.service.d/50-aip.conf"));
    expect(gpu).toEqual(
      expect.arrayContaining([
        "PrivateDevices=no",
        "DevicePolicy=closed",
        "DeviceAllow=/dev/nvidiactl rw",
        "MemoryMax=4294967296",
        "CPUQuota=200%",
        "CPUWeight=200",
      ]),
    );
    expect(gpu).not.toContain("PrivateDevices=yes");
    expect(lines(file(files, "aip-agent@plain-1.2.3.service.d/50-aip.conf"))).toContain("PrivateDevices=yes");
    expect(file(files, "agents.list")).toBe("infer-1.2.3\nplain-1.2.3\n");
  });

  it("the CLI writes the files (and says where)", () => {
    const out = join(t.dir, "cli");
    const missing = sh(process.execPath, [
      join(ROOT, "dist/scripts/aip.js"),
      "systemd",
      "render",
      "--out",
      out,
      "--install-dir",
      join(t.dir, "nowhere"),
      "--node",
      process.execPath,
    ]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(
      `aip-agent@testgen.service.d/50-aip.conf: ExecStart ${join(t.dir, "nowhere")}/dist/agents/testgen/main.js does not exist`,
    );
    expect(existsSync(out)).toBe(false);
    const r = sh(process.execPath, [
      join(ROOT, "dist/scripts/aip.js"),
      "systemd",
      "render",
      "--out",
      out,
      "--install-dir",
      ROOT,
      "--node",
      process.execPath,
    ]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    for (const f of [
      "aip-orchestrator.service",
      "aip-orchestrator.socket",
      "aip-agent@.service",
      "aip-agent@summarize.service.d/50-aip.conf",
      "aip.sysusers.conf",
      "aip.tmpfiles.conf",
    ]) {
      expect(existsSync(join(out, f)), f).toBe(true);
      expect(r.stdout).toContain(join(out, f));
    }
    const bad = sh(process.execPath, [join(ROOT, "dist/scripts/aip.js"), "systemd", "render"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--out DIR is required/);
  });
});
