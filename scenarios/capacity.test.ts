// capacity's declared check, judged on hand-made histories (no Docker): what its body observes
// of turn B (sent to a session on the full node) decides it.
import { describe, expect, it } from "vitest";
import { deriveChecks, emptyHistory, judgeHistory, type ScenarioHistory } from "../lab/judge/history.ts";
import type { TurnSeen } from "../lab/kits/proof.ts";
import scenario, { CAPACITY_TURN_FINDING, type Observed, type TurnOnFullNode } from "./capacity.ts";

const hist = (observations: Observed): ScenarioHistory => ({ ...emptyHistory("capacity", "2026.9.6", { own: [], labWide: [] }), bodyReturned: true, observations });
const derived = (o: Observed) => deriveChecks(scenario.checks!, o, true);

const MARK = "mark-0a1b2c3d";
const REPLY = `fleetlab-ok: read returned: ${MARK} written only on node-1`;
const onNode = (more: Partial<TurnSeen> = {}): TurnSeen => ({ alias: "node-1", marker: { nonce: MARK, reply: REPLY, environmentId: "env-1" }, reply: REPLY, launches: [{ seq: 41, t: 1, conn: "c3", launchId: "l-1", environmentId: "env-1" }], ...more });
const ERROR = "⚠️ Agent failed before reply: device worker capacity remained full.\nTo view logs, run `openclaw logs --follow` in a terminal.";
const TRANSCRIPT = ["run-failed-before-reply: This turn ended before a reply: device worker capacity remained full"];

/** Turn B as 2026.9.6 showed it: failed after ~10 s while the slot was held, never run once it freed. */
const failed: TurnOnFullNode = { chatSend: "started", agentWait: "error", error: ERROR, waitedMs: 10_412, transcript: TRANSCRIPT, afterSlotFreed: { within_s: 30, modelRequests: 0, answered: false } };
/** Turn B waiting for the slot and answered on the node once it freed. */
const waited: TurnOnFullNode = { chatSend: "started", agentWait: "timeout", waitedMs: 30_004, transcript: [], afterSlotFreed: { within_s: 30, modelRequests: 1, answered: true }, onNode: onNode() };

const EXPECTATION = "a turn sent to a session whose node has every worker slot busy waits for a slot and completes on that node once one frees (as a turn to an offline node does)";

describe(`capacity: ${CAPACITY_TURN_FINDING}`, () => {
  it("holds when turn B is answered once the slot frees and proven on the node: no observed", () => {
    expect(derived({ turnB: waited })).toEqual({ checks: [{ id: CAPACITY_TURN_FINDING, expectation: EXPECTATION, holds: true }], notes: [] });
  });

  it("does not hold when turn B failed while the slot was held and never ran: the registered signature, a known finding", () => {
    const signature = { chatSend: "started", agentWait: "error", error: ERROR, failedAfter: "10-20s", transcript: TRANSCRIPT, ranAfterSlotFreed: { within_s: 30, ran: false } };
    expect(derived({ turnB: failed }).checks).toEqual([{ id: CAPACITY_TURN_FINDING, expectation: EXPECTATION, holds: false, observed: signature }]);
    expect(signature).toEqual(scenario.findings!.find((f) => f.id === CAPACITY_TURN_FINDING)!.signature);
    const j = judgeHistory(hist({ turnB: failed }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", `known-finding ${CAPACITY_TURN_FINDING}`]);
  });

  it("does not hold when turn B answered but no launch on the node proves it ran there: what the proof read is in the observed", () => {
    const r = derived({ turnB: { ...waited, waitedMs: 4_000, onNode: onNode({ launches: [] }) } }).checks[0]!;
    expect(r.holds).toBe(false);
    expect(r.observed).toEqual({ chatSend: "started", agentWait: "timeout", failedAfter: "<10s", transcript: [], ranAfterSlotFreed: { within_s: 30, ran: true }, onNode: { reply: "node-only marker", launches: 0 } });
    expect(judgeHistory(hist({ turnB: { ...waited, onNode: onNode({ launches: [] }) } }), scenario, []).verdict).toBe("fail");
  });

  it("a turn that failed otherwise (after 20 s, other words) differs from the registered signature: fail", () => {
    const r = derived({ turnB: { ...failed, waitedMs: 25_000, afterSlotFreed: { within_s: 30, modelRequests: 1, answered: false } } }).checks[0]!;
    expect([r.holds, r.observed]).toEqual([false, { chatSend: "started", agentWait: "error", error: ERROR, failedAfter: ">=20s", transcript: TRANSCRIPT, ranAfterSlotFreed: { within_s: 30, ran: true } }]);
    expect(judgeHistory(hist({ turnB: { ...failed, waitedMs: 25_000 } }), scenario, []).verdict).toBe("fail");
  });

  it("nothing observed of turn B once the body returned: the lab could not tell", () => {
    expect(judgeHistory(hist({}), scenario, [])).toMatchObject({ verdict: "unknown", detail: `check ${CAPACITY_TURN_FINDING} had nothing to judge: the body returned without observing what it reads` });
  });
});
