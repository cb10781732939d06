import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { httpRequest } from "../../../protocol/transport/client.js";
import { ndjsonSession } from "../../helpers.js";
import { echo, startAgency, until, type Agency } from "../harness.js";

let agency: Agency | undefined;
afterEach(async () => {
  await agency?.stop();
  agency = undefined;
});

const agentOf = (name: string) => agency!.orchestrator.agents.find((a) => a.name === name)!;

describe("latest wins (constraints.document_id, per client connection)", () => {
  it("cancels the running request for the same document on the same connection, all the way into the agent", async () => {
    agency = await startAgency([{ name: "ide", env: { FIXTURE_ABORT_LOG: "{dir}/aborts.log" } }]);
    const client = await ndjsonSession(agency.socket);
    const doc = { document_id: "file:///a.ts", client_id: "vscode-1" };
    const first = client.send(echo({ trace_id: "key-1", constraints: { ...doc, delay_ms: 10_000 } }) as never);
    // In flight in the agent itself (its own /healthz), not only forwarded: then its signal must fire.
    const agentBusy = async (): Promise<boolean> =>
      JSON.parse((await httpRequest(agentOf("ide").socketPath, { path: "/healthz" })).body).concurrent_requests === 1;
    await until(agentBusy, 20_000, "first in flight in the agent");
    const second = await client.send(echo({ trace_id: "key-2", constraints: doc }) as never);
    expect(second).toMatchObject({ status: "success", trace_id: "key-2" });
    const old = await first;
    expect(old.error).toMatchObject({ type: "AIP_ERR_CANCELLED", status: 499, superseded_by: "key-2" });
    const log = join(agency.dir, "aborts.log");
    await until(
      () => existsSync(log) && readFileSync(log, "utf8").includes("key-1"),
      5000,
      "agent saw the cancellation",
    );
    client.close();
  });

  it("cancels a queued request, and leaves other documents and other client ids alone", async () => {
    agency = await startAgency([{ name: "ide", max_concurrent: 1 }]);
    const client = await ndjsonSession(agency.socket);
    const hog = client.send(echo({ trace_id: "hog", constraints: { delay_ms: 800, document_id: "b.ts" } }) as never);
    await until(() => agentOf("ide").inflight === 1, 20_000, "hog in flight");
    const queued = client.send(echo({ trace_id: "q-1", constraints: { document_id: "a.ts" } }) as never);
    const otherClient = client.send(
      echo({ trace_id: "c-2", constraints: { document_id: "a.ts", client_id: "other" } }) as never,
    );
    await until(() => agentOf("ide").pool.stats().queued === 2, 20_000, "two queued");
    const newer = client.send(echo({ trace_id: "q-2", constraints: { document_id: "a.ts" } }) as never);
    expect((await queued).error).toMatchObject({ type: "AIP_ERR_CANCELLED", superseded_by: "q-2" });
    expect((await newer).status).toBe("success");
    expect((await otherClient).status).toBe("success");
    expect((await hog).status).toBe("success");
    client.close();
  });
});
