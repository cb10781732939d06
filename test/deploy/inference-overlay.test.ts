/** deploy/kubernetes/overlays/inference-server: the base with the agents' models on an in-cluster inference Service. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { describe, expect, it } from "vitest";
import { remoteConfig } from "../../agents/lib/llm/remote/config.js";
import { ROOT, tempDir } from "../helpers.js";

const DIR = join(ROOT, "deploy/kubernetes/overlays/inference-server");
const yaml = (path: string): Record<string, any> => load(readFileSync(path, "utf8")) as Record<string, any>;

/** Kustomize's strategic merge of the patch into the base Deployment: containers and volumes by name, env and mounts appended. */
function merged(): Record<string, any> {
  const base = yaml(join(ROOT, "deploy/kubernetes/base/deployment.yaml"));
  const patch = yaml(join(DIR, "agents-model.yaml"));
  const out = structuredClone(base);
  const spec = out.spec.template.spec;
  spec.volumes = [...spec.volumes, ...patch.spec.template.spec.volumes];
  for (const c of patch.spec.template.spec.containers) {
    const target = spec.containers.find((x: { name: string }) => x.name === c.name);
    if (!target) throw new Error(`the patch names container ${c.name}, which the base does not have`);
    target.env = [...(target.env ?? []), ...c.env];
    target.volumeMounts = [...(target.volumeMounts ?? []), ...c.volumeMounts];
  }
  return out;
}

describe("deploy/kubernetes/overlays/inference-server", () => {
  it("builds on the base with one patch of the agency Deployment", () => {
    const k = yaml(join(DIR, "kustomization.yaml"));
    expect(k.resources).toEqual(["../../base"]);
    expect(k.patches).toEqual([{ path: "agents-model.yaml" }]);
    const patch = yaml(join(DIR, "agents-model.yaml"));
    expect(patch).toMatchObject({ kind: "Deployment", metadata: { name: "agency" } });
  });

  it("the merged Deployment validates, and each model-backed agent's settings are a valid inference-server configuration", () => {
    const d = merged();
    expect(() => new Deployment(d).validate()).not.toThrow();
    const t = tempDir("aipk8s-");
    try {
      const key = join(t.dir, "key");
      writeFileSync(key, "sk-from-the-secret\n");
      for (const name of ["complete", "summarize", "testgen", "diagnose"]) {
        const c = d.spec.template.spec.containers.find((x: { name: string }) => x.name === name);
        const env = Object.fromEntries(c.env.map((e: { name: string; value: string }) => [e.name, e.value]));
        expect(env.AIP_MODEL_URL).toBe("http://llama.inference.svc.cluster.local:8080");
        expect(env.AIP_MODEL_KEY_FILE).toBe("/var/run/secrets/aip/key");
        expect(c.volumeMounts).toContainEqual({ name: "model-key", mountPath: "/var/run/secrets/aip", readOnly: true });
        // The key is a mounted file, never a value in the manifest.
        expect(JSON.stringify(c.env)).not.toMatch(/sk-|Bearer/);
        const cfg = remoteConfig({ ...env, AIP_MODEL_KEY_FILE: key });
        expect(cfg).toMatchObject({ model: "qwen2.5-coder-1.5b", fim: "llama-infill" });
        expect(cfg!.key()).toBe("sk-from-the-secret");
      }
    } finally {
      t.cleanup();
    }
    expect(d.spec.template.spec.volumes).toContainEqual({
      name: "model-key",
      secret: { secretName: "model-key", defaultMode: 0o400 },
    });
  });
});
