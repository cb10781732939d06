/**
 * `/metrics` cannot be grown by clients: thousands of client-chosen action names (long ones too) add
 * no series and no label value; only registered agents, their actions and AIP error codes are labels.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRequest, invokeHttp } from "../../protocol/transport/client.js";
import { echo, startAgency, type Agency } from "../orchestrator/harness.js";

function series(text: string, name: string): string[] {
  return text.split("\n").filter((l) => l.startsWith(`${name}{`));
}

describe("bounded metrics", () => {
  let agency: Agency;
  beforeAll(async () => {
    agency = await startAgency([{ name: "svc" }]);
  }, 60_000);
  afterAll(() => agency.stop());

  it("3,000 unknown action names leave the series count unchanged", async () => {
    expect((await invokeHttp(agency.socket, echo())).json.status).toBe("success");
    // One unknown action first, so that its `other` series exists in the baseline.
    await invokeHttp(agency.socket, echo({ action: "never-registered" }));
    const before = (await httpRequest(agency.socket, { path: "/metrics" })).body;
    for (let i = 0; i < 3000; i++) {
      const name = i % 100 === 0 ? `x${i}-${"y".repeat(50_000)}` : `made-up-action-${i}`;
      await invokeHttp(agency.socket, echo({ action: name }));
    }
    const after = (await httpRequest(agency.socket, { path: "/metrics" })).body;
    expect(series(after, "aip_requests_total").length).toBe(series(before, "aip_requests_total").length);
    expect(after).not.toContain("made-up-action");
    expect(after).not.toContain("yyyyyyyyyy");
    expect(after.length).toBeLessThan(before.length + 4096);
    expect(series(after, "aip_requests_total").some((l) => l.includes('action="other"'))).toBe(true);
  }, 240_000);
});
