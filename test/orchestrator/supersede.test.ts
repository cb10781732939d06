import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { invokeHttp } from "../../protocol/client.js";
import { echo, startAgency, until, type Agency } from "./harness.js";

let agency: Agency | undefined;
afterEach(async () => {
  await agency?.stop();
  agency = undefined;
});

const agentOf = (name: string) => agency!.orchestrator.agents.find((a) => a.name === name)!;

describe("latest wins (constraints.document_id)", () => {
  it("cancels the running request for the same document, all the way into the agent", async () => {
    agency = await startAgency([{ name: "ide", env: { FIXTURE_ABORT_LOG: "{dir}/aborts.log" } }]);
    const doc = { document_id: "file:///a.ts", client_id: "vscode-1" };
    const first = invokeHttp(agency.socket, echo({ trace_id: "key-1", constraints: { ...doc, delay_ms: 10_000 } }));
    await until(() => agentOf("ide").inflight === 1, 5000, "first in flight");
    const second = await invokeHttp(agency.socket, echo({ trace_id: "key-2", constraints: doc }));
    expect(second.json).toMatchObject({ status: "success", trace_id: "key-2" });
    const old = await first;
    expect(old.status).toBe(499);
    expect(old.json.error).toMatchObject({ type: "AIP_ERR_CANCELLED", superseded_by: "key-2" });
    const log = join(agency.dir, "aborts.log");
    await until(() => existsSync(log) && readFileSync(log, "utf8").includes("key-1"), 5000, "agent saw the cancellation");
  });

  it("cancels a queued request, and leaves other documents and clients alone", async () => {
    agency = await startAgency([{ name: "ide", max_concurrent: 1 }]);
    const hog = invokeHttp(agency.socket, echo({ trace_id: "hog", constraints: { delay_ms: 800, document_id: "b.ts" } }));
    await until(() => agentOf("ide").inflight === 1, 5000, "hog in flight");
    const queued = invokeHttp(agency.socket, echo({ trace_id: "q-1", constraints: { document_id: "a.ts" } }));
    const otherClient = invokeHttp(agency.socket, echo({ trace_id: "c-2", constraints: { document_id: "a.ts", client_id: "other" } }));
    await until(() => agentOf("ide").pool.stats().queued === 2, 5000, "two queued");
    const newer = invokeHttp(agency.socket, echo({ trace_id: "q-2", constraints: { document_id: "a.ts" } }));
    expect((await queued).json.error).toMatchObject({ type: "AIP_ERR_CANCELLED", superseded_by: "q-2" });
    expect((await newer).json.status).toBe("success");
    expect((await otherClient).json.status).toBe("success");
    expect((await hog).json.status).toBe("success");
  });
});
