import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./mcp-cancel-call.ts";
import { deriveChecks, emptyHistory, judgeHistory } from "../lab/judge/history.ts";

const ID = "R-mcp-cancel-call";
type Aborted = NonNullable<Observed["aborted"]>;
const aborted = (more: Partial<Aborted> = {}): Aborted => ({
  heldRpcId: 3,
  cancels: [{ requestId: 3, reason: "AbortError: This operation was aborted" }],
  heldAfter: { status: "cancelled", cancelReason: "notifications/cancelled" },
  chat: "aborted",
  run: "ok",
  ...more,
});
const judged = (o: Observed) => deriveChecks(scenario.checks!, { ...o }, true).checks.find((c) => c.id === ID);
const history = (o: Observed) => ({ ...emptyHistory("mcp-cancel-call", "2026.9.6", { own: [], labWide: [] }), bodyReturned: true, observations: { ...o } });

describe("mcp-cancel-call's check over what its body observed", () => {
  it("a cancel naming the held call's id, the held call cancelled by it, the turn aborted: holds", () => {
    expect(judged({ aborted: aborted() })).toEqual({
      id: ID,
      expectation: "cancelling the turn (chat.abort) cancels the call at the server (notifications/cancelled)",
      holds: true,
      observed: { cancelForHeldCall: true, heldCall: { status: "cancelled", cancelReason: "notifications/cancelled" }, chat: "aborted", run: "ok" },
    });
    expect(judgeHistory(history({ aborted: aborted() }), scenario, []).verdict).toBe("pass");
  });

  it("a cancel naming another call, the held call still held, the turn not aborted: short", () => {
    const o = aborted({ cancels: [{ requestId: 2, reason: "x" }], heldAfter: { status: "held", cancelReason: null }, chat: "final" });
    expect(judged({ aborted: o })?.holds).toBe(false);
    expect(judged({ aborted: o })?.observed).toEqual({ cancelForHeldCall: false, heldCall: { status: "held", cancelReason: null }, chat: "final", run: "ok" });
  });

  it("the held call cancelled only because its connection closed, or gone from north's list: short", () => {
    expect(judged({ aborted: aborted({ heldAfter: { status: "cancelled", cancelReason: "connection-closed" } }) })?.holds).toBe(false);
    expect(judged({ aborted: aborted({ heldAfter: null, chat: null }) })).toMatchObject({ holds: false, observed: { cancelForHeldCall: true, heldCall: null, chat: null } });
  });

  it("nothing observed after a body that returned: unknown", () => {
    expect(judgeHistory(history({}), scenario, []).verdict).toBe("unknown");
  });
});
