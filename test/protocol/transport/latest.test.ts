/** Latest wins: one rule for the orchestrator and the agents; the key is (client_id, action, document_id). */
import { describe, expect, it } from "vitest";
import { LatestWins, documentKey } from "../../../protocol/transport/latest.js";
import type { AipRequest } from "../../../protocol/contract/schemas.js";

const req = (action: string, constraints: Record<string, unknown>): AipRequest => ({
  action,
  context: {},
  constraints,
});

describe("latest wins", () => {
  it("a newer request of the same action on the same document from the same client supersedes the older", () => {
    const latest = new LatestWins();
    const old = latest.claim(req("complete", { document_id: "a.ts", client_id: "ed" }), "t-1");
    const next = latest.claim(req("complete", { document_id: "a.ts", client_id: "ed" }), "t-2");
    expect(old.signal.aborted).toBe(true);
    expect(old.signal.reason).toMatchObject({ code: "AIP_ERR_CANCELLED" });
    expect((old.signal.reason as { extensions: Record<string, unknown> }).extensions).toMatchObject({
      superseded_by: "t-2",
      document_id: "a.ts",
    });
    expect(next.signal.aborted).toBe(false);
    expect(latest.superseded).toBe(1);
  });

  it("another action on the same document does not cancel it: a summarize never cancels the completion being typed", () => {
    const latest = new LatestWins();
    const completion = latest.claim(req("complete", { document_id: "a.ts" }), "t-1");
    const summary = latest.claim(req("summarize", { document_id: "a.ts" }), "t-2");
    expect(completion.signal.aborted).toBe(false);
    expect(summary.signal.aborted).toBe(false);
    expect(documentKey(req("complete", { document_id: "a.ts" }))).not.toBe(
      documentKey(req("summarize", { document_id: "a.ts" })),
    );
  });

  it("other clients and other documents are independent; no document id, no supersession", () => {
    const latest = new LatestWins();
    const a = latest.claim(req("complete", { document_id: "a.ts", client_id: "alice" }), "t-1");
    latest.claim(req("complete", { document_id: "a.ts", client_id: "bob" }), "t-2");
    latest.claim(req("complete", { document_id: "b.ts", client_id: "alice" }), "t-3");
    const anon1 = latest.claim(req("complete", {}), "t-4");
    latest.claim(req("complete", {}), "t-5");
    expect(a.signal.aborted).toBe(false);
    expect(anon1.signal.aborted).toBe(false);
    expect(documentKey(req("complete", { document_id: "" }))).toBeUndefined();
  });

  it("release forgets a finished request, but not a newer one that replaced it", () => {
    const latest = new LatestWins();
    const first = latest.claim(req("complete", { document_id: "a.ts" }), "t-1");
    const second = latest.claim(req("complete", { document_id: "a.ts" }), "t-2");
    first.release();
    expect(latest.size).toBe(1);
    second.release();
    expect(latest.size).toBe(0);
  });
});
