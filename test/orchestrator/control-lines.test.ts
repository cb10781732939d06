/**
 * NDJSON control lines end to end (docs/aip-1.md, Control lines): a client's `cancel` at the front door
 * cancels the forwarded request, and the orchestrator's own `cancel` on its shared connection to the
 * agent cancels the agent's handler, while the other request on both connections goes on.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ndjsonSession } from "../helpers.js";
import { echo, startAgency, until, type Agency } from "./harness.js";

let agency: Agency | undefined;
afterEach(async () => {
  await agency?.stop();
  agency = undefined;
});

describe("NDJSON control lines through the orchestrator", () => {
  it("a client's cancel stops its request, inside the agent too; its other request is answered", async () => {
    agency = await startAgency([{ name: "slow", env: { FIXTURE_ABORT_LOG: "{dir}/aborts.log" } }]);
    const abortLog = join(agency.dir, "aborts.log");
    const session = await ndjsonSession(agency.socket);
    try {
      const long = session.send({ ...echo({ constraints: { delay_ms: 10_000 } }), trace_id: "cl-long" });
      const short = session.send({ ...echo({ constraints: { delay_ms: 300 } }), trace_id: "cl-short" });
      // Both are in flight at the agent before the cancel is sent.
      await until(() => agency!.orchestrator.agents[0]!.inflight === 2, 20_000, "both forwarded");
      session.write('{"control":"cancel","trace_id":"cl-long"}\n');
      expect(await long).toMatchObject({ status: "error", trace_id: "cl-long", error: { type: "AIP_ERR_CANCELLED" } });
      await until(
        () => existsSync(abortLog) && readFileSync(abortLog, "utf8").includes("cl-long"),
        5000,
        "agent abort",
      );
      expect(await short).toMatchObject({ status: "success", trace_id: "cl-short" });
      expect(readFileSync(abortLog, "utf8")).not.toContain("cl-short");
    } finally {
      session.close();
    }
  });
});
