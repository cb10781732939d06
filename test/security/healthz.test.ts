/**
 * The orchestrator's /healthz shows no client's path and stays bounded whatever an agent reports: a
 * path under a path key (root, file_path, workspaces, …) is shown as its digest, and a report over
 * MAX_REPORT_CHARS keeps only status, reason and model_engine. A real fixture agent reports them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_REPORT_CHARS } from "../../orchestrator/core/health.js";
import { httpRequest } from "../../protocol/transport/client.js";
import { workspaceId } from "../../protocol/util/paths.js";
import { startAgency, type Agency } from "../orchestrator/harness.js";

const CLIENT = "/home/alice/secret-project";

describe("/healthz and agent reports", () => {
  let agency: Agency;
  beforeAll(async () => {
    agency = await startAgency([
      {
        name: "pathy",
        env: {
          FIXTURE_HEALTH_EXTRA: JSON.stringify({
            typed: { workspaces: [{ root: CLIENT, state: "ready", files: 3 }], last_file_path: `${CLIENT}/src/a.ts` },
            roots: [CLIENT],
            model_engine: { kind: "local", model: "/srv/models/m.gguf" },
          }),
        },
      },
      {
        name: "chatty",
        env: {
          FIXTURE_DEGRADED: "no model",
          FIXTURE_HEALTH_EXTRA: JSON.stringify({ history: Array.from({ length: 5000 }, (_, i) => `entry ${i}`) }),
        },
      },
    ]);
  }, 60_000);
  afterAll(() => agency.stop());

  it("names a client's paths by digest, keeps the rest", async () => {
    const body = (await httpRequest(agency.socket, { path: "/healthz" })).body;
    expect(body).not.toContain("alice");
    const report = JSON.parse(body).agents.pathy.health.report;
    expect(report.typed.workspaces[0]).toEqual({ root: workspaceId(CLIENT), state: "ready", files: 3 });
    expect(report.typed.last_file_path).toBe(workspaceId(`${CLIENT}/src/a.ts`));
    expect(report.roots).toEqual([workspaceId(CLIENT)]);
    // Not a path key: the operator's model path stays (aip health shows it).
    expect(report.model_engine.model).toBe("/srv/models/m.gguf");
  });

  it("bounds a report over MAX_REPORT_CHARS to what routing reads", async () => {
    const body = (await httpRequest(agency.socket, { path: "/healthz" })).body;
    const chatty = JSON.parse(body).agents.chatty;
    expect(chatty.health.report).toEqual({
      report_truncated_chars: expect.any(Number),
      status: "degraded",
      reason: "no model",
    });
    expect(chatty.health.report.report_truncated_chars).toBeGreaterThan(MAX_REPORT_CHARS);
    expect(chatty.degraded).toBe(true);
    expect(body.length).toBeLessThan(3 * MAX_REPORT_CHARS);
  });
});
