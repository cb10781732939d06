import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { validate as lintDockerfile } from "dockerfile-utils";
import { load, loadAll } from "js-yaml";
import ts from "typescript";
import { Service } from "kubernetes-models/v1/Service";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../orchestrator/core/config.js";
import { ManifestSchema } from "../../protocol/contract/schemas.js";
import { ROOT } from "../helpers.js";

const BASE = join(ROOT, "deploy/kubernetes/base");
const docs = readdirSync(BASE)
  .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
  .flatMap((f) => loadAll(readFileSync(join(BASE, f), "utf8")) as Record<string, any>[]);
const byKind = (kind: string): Record<string, any> => {
  const d = docs.find((x) => x.kind === kind);
  if (!d) throw new Error(`no ${kind} in ${BASE}`);
  return d;
};

/** The production agents: the image's config (the echo test agent is not among them). */
const production = parseConfig(
  JSON.parse(readFileSync(join(ROOT, "manifests/agency.production.json"), "utf8")),
  ROOT,
).agents;

describe("deploy/kubernetes", () => {
  it("every object validates against the Kubernetes OpenAPI schemas (kubernetes-models, offline)", () => {
    const models: Record<string, (o: any) => { validate(): void }> = {
      Deployment: (o) => new Deployment(o),
      Service: (o) => new Service(o),
    };
    expect(docs.map((d) => d.kind).sort()).toEqual(["Deployment", "Service"]);
    for (const d of docs) expect(() => models[d.kind]!(d).validate(), `${d.kind} ${d.metadata?.name}`).not.toThrow();
  });

  it("the validator does reject a bad object (a wrong quantity, a missing container name)", () => {
    const bad = structuredClone(byKind("Deployment"));
    bad.spec.template.spec.containers[1].resources.limits.cpu = "two cores";
    expect(() => new Deployment(bad).validate()).toThrow(/quantity/);
    const nameless = structuredClone(byKind("Deployment"));
    delete nameless.spec.template.spec.containers[0].name;
    expect(() => new Deployment(nameless).validate()).toThrow(/name/);
  });

  it("kustomization lists every resource file of the base", () => {
    const k = load(readFileSync(join(BASE, "kustomization.yaml"), "utf8")) as { kind: string; resources: string[] };
    expect(k.kind).toBe("Kustomization");
    expect(k.resources.sort()).toEqual(
      readdirSync(BASE)
        .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
        .sort(),
    );
  });

  it("one container per production agent, requests and limits from its manifest's cpu and memory, sockets on a shared emptyDir", () => {
    const spec = byKind("Deployment").spec.template.spec;
    const containers = spec.containers as Record<string, any>[];
    expect(containers.map((c) => c.name)).toEqual(["orchestrator", ...production.map((a) => a.name)]);
    expect(spec.volumes.find((v: any) => v.name === "sockets")).toEqual({ name: "sockets", emptyDir: {} });
    for (const a of production) {
      const c = containers.find((x) => x.name === a.name)!;
      const m = ManifestSchema.parse(JSON.parse(readFileSync(a.manifestPath, "utf8")));
      const want = { cpu: m.resources.cpu, memory: m.resources.memory };
      expect(c.resources, a.name).toEqual({ requests: want, limits: want });
      expect(c.command, a.name).toEqual([
        "node",
        `/opt/aip/dist/agents/${a.name}/main.js`,
        "--listen",
        `/run/aip/agents/${a.name}.sock`,
      ]);
    }
    for (const c of containers) {
      expect(c.volumeMounts, c.name).toContainEqual({ name: "sockets", mountPath: "/run/aip" });
      expect(c.securityContext, c.name).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] },
      });
    }
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
  });

  it("liveness and readiness probe /livez and /readyz on the probe port, which the Service names metrics", () => {
    const orch = byKind("Deployment").spec.template.spec.containers[0];
    expect(orch.args).toEqual(["up", "--mode", "systemd", "--config", "/opt/aip/manifests/agency.production.json"]);
    expect(orch.ports).toEqual([{ name: "metrics", containerPort: 9464 }]);
    expect(orch.env).toEqual(
      expect.arrayContaining([
        { name: "AIP_HEALTH_PORT", value: "9464" },
        { name: "AIP_HEALTH_HOST", value: "0.0.0.0" },
      ]),
    );
    expect(orch.livenessProbe.httpGet).toEqual({ path: "/livez", port: "metrics" });
    expect(orch.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "metrics" });
    expect(byKind("Service").spec.ports).toEqual([{ name: "metrics", port: 9464, targetPort: "metrics" }]);
  });
});

describe("Dockerfile", () => {
  const text = readFileSync(join(ROOT, "Dockerfile"), "utf8");

  it("lints clean (dockerfile-utils)", () => {
    const problems = lintDockerfile(text).map((d) => `${d.range.start.line + 1}: ${d.message}`);
    expect(problems).toEqual([]);
    // …and the linter does flag a broken one.
    expect(lintDockerfile("RUN echo no base image\nEXPOSE not-a-port\n").length).toBeGreaterThan(0);
  });

  it("multi-stage, non-root, CPU llama binary unless LLAMA_GPU=cuda, HEALTHCHECK on /livez, the production config", () => {
    expect(text.match(/^FROM /gm)).toHaveLength(2);
    expect(text).toMatch(/^FROM \$\{NODE_IMAGE\} AS build$/m);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toMatch(/^ARG LLAMA_GPU=cpu$/m);
    expect(text).toContain('linux-x64-cuda|linux-x64-cuda-ext) [ "$LLAMA_GPU" = cuda ] || rm -rf "$d" ;;');
    expect(text).toMatch(/^HEALTHCHECK .*\n\s+CMD .*127\.0\.0\.1:9464\/livez/m);
    expect(text).toContain('CMD ["up", "--config", "/opt/aip/manifests/agency.production.json"]');
    // Every source directory the build compiles (tsconfig.build.json) is copied into the build stage.
    // Read as TypeScript reads it: a tsconfig may hold comments.
    const { config } = ts.parseConfigFileTextToJson(
      "tsconfig.build.json",
      readFileSync(join(ROOT, "tsconfig.build.json"), "utf8"),
    );
    const include = (config as { include: string[] }).include;
    for (const dir of include) expect(text, dir).toContain(`COPY ${dir} ./${dir}`);
  });

  it("tools/container/build-local-base.sh: valid sh, executable, stands in for the Dockerfile's NODE_IMAGE with its node user", () => {
    const script = join(ROOT, "tools/container/build-local-base.sh");
    execFileSync("sh", ["-n", script]);
    expect(statSync(script).mode & 0o111).not.toBe(0);
    const body = readFileSync(script, "utf8");
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(text)![1]!;
    expect(body).toContain(`IMAGE=\${IMAGE:-localhost/${base}}`);
    expect(body).toContain("useradd --uid 1000 --gid node");
    expect(body).toContain("/usr/local/bin/node");
  });

  it("the production config has every production agent and not the echo test agent", () => {
    expect(production.map((a) => a.name)).toEqual([
      "summarize",
      "search",
      "testgen",
      "diagnose",
      "complete",
      "complete-lite",
    ]);
  });
});
