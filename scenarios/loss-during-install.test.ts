// loss-during-install's declared checks and premises, judged on hand-made histories (no Docker):
// the node fresh, the kill inside the install, the dispatch the kill cut short, the dispatch after
// the restart, the reinstall and the next turn, as the body observes them.
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory, type ScenarioHistory } from "../lab/judge/history.ts";
import type { BundleDir } from "../lab/kits/inside-node.ts";
import type { TurnSeen } from "../lab/kits/proof.ts";
import scenario, { type Observed } from "./loss-during-install.ts";
import { historyOf, premiseOf } from "../lab/testing/histories.ts";

const hist = (observations: Observed): ScenarioHistory => historyOf(scenario, observations);
const judged = (o: Observed, id: string) => {
  const c = deriveChecks(scenario.checks!, o, true).checks.find((x) => x.id === id)!;
  return { holds: c.holds, observed: c.observed };
};

const HASH = "3f".repeat(32);
const bundle = (more: Partial<BundleDir> = {}): BundleDir => ({ dir: `/home/lab/.openclaw/node-host/gateway-1/bundles/${HASH}`, hash: HASH, inode: 77, receiptMtime: 1_796_000_000, receipt: { bundleHash: HASH, openclawVersion: "2026.9.6" }, files: ["bootstrap-receipt.json", "package.json", "worker.mjs"], ...more });
const REPLY = "fleetlab-ok: read returned: mark-9 written only on node-1";
const turn = (more: Partial<TurnSeen> = {}): TurnSeen => ({ alias: "node-1", marker: { nonce: "mark-9", reply: REPLY, environmentId: "env-1" }, reply: REPLY, launches: [{ seq: 300, t: 1, conn: "c2", launchId: "l", environmentId: "env-1" }], ...more });

const good = (): Observed => ({
  fresh: { bundleDirs: [] },
  killAt: { installInvokeSeen: true, installAnswered: false },
  redispatch: { alias: "node-1", state: "active", deviceId: "id-1" },
  firstDispatch: { result: { code: "UNAVAILABLE", message: "device worker node disconnected during bundle install", ms: 1_850 }, placement: { state: "failed", generation: 1, terminalReason: "bundle install failed" } },
  reinstall: { bundles: { bundles: [bundle()], strayReceipts: [] }, entries: [HASH], placementHash: HASH, openclawVersion: "2026.9.6", status: "installed" },
  turn: turn(),
});

describe("loss-during-install", () => {
  it("a run where the dispatch failed, the reinstall was clean and the turn ran on the node: pass", () => {
    expect(deriveChecks(scenario.checks!, good(), true).checks.map((c) => [c.id, c.holds])).toEqual([
      ["R-install-loss-dispatch-fails", true],
      ["R-install-loss-clean-reinstall", true],
      ["R-install-loss-redispatch", true],
      ["R-install-loss-turn", true],
    ]);
    expect(judgeHistory(hist(good()), scenario, []).verdict).toBe("pass");
  });

  it("P-install-loss-fresh: no bundle before the first dispatch; a node that already has one stops the body and the lab could not tell", () => {
    expect(premiseOf(scenario, "P-install-loss-fresh", good())).toEqual({ id: "P-install-loss-fresh", met: true, observed: { bundleDirs: 0 } });
    const used = { fresh: { bundleDirs: [`/home/lab/.openclaw/node-host/gateway-1/bundles/${HASH}`] } };
    expect(premiseOf(scenario, "P-install-loss-fresh", used)).toEqual({ id: "P-install-loss-fresh", met: false, observed: { bundleDirs: 1 } });
    const j = judgeHistory({ ...hist(used), stopped: "P-install-loss-fresh" }, scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.detail).toContain("premise P-install-loss-fresh not met");
  });

  it("P-install-loss-kill-in-install: the install reached the node and was never answered; a kill before it or after its answer stops the body and the lab could not tell", () => {
    expect(premiseOf(scenario, "P-install-loss-kill-in-install", good())).toEqual({ id: "P-install-loss-kill-in-install", met: true, observed: { installInvokeSeen: true, installAnswered: false } });
    const late = { fresh: good().fresh, killAt: { installInvokeSeen: true, installAnswered: true } };
    expect(premiseOf(scenario, "P-install-loss-kill-in-install", late)).toEqual({ id: "P-install-loss-kill-in-install", met: false, observed: { installInvokeSeen: true, installAnswered: true } });
    expect(premiseOf(scenario, "P-install-loss-kill-in-install", { killAt: { installInvokeSeen: false, installAnswered: false } })?.met).toBe(false);
    const j = judgeHistory({ ...hist(late), stopped: "P-install-loss-kill-in-install" }, scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.detail).toContain("premise P-install-loss-kill-in-install not met");
  });

  it("R-install-loss-redispatch: the dispatch after the restart gives an active placement; a body that stopped there fails on it", () => {
    expect(judged(good(), "R-install-loss-redispatch")).toEqual({ holds: true, observed: [{ alias: "node-1", state: "active" }] });
    const { turn: _turn, reinstall: _reinstall, ...upToIt } = good();
    const failed = { ...upToIt, redispatch: { alias: "node-1", state: "failed" } };
    expect(judged(failed, "R-install-loss-redispatch")).toEqual({ holds: false, observed: [{ alias: "node-1", state: "failed" }] });
    const j = judgeHistory({ ...hist(failed), stopped: "R-install-loss-redispatch" }, scenario, []);
    expect([j.verdict, j.detail]).toEqual(["fail", "R-install-loss-redispatch: expectation not met and no finding is registered as R-install-loss-redispatch"]);
  });

  it("R-install-loss-dispatch-fails: an error in time and a terminal placement with a reason; an accepted dispatch or a placement left active does not hold", () => {
    expect(judged(good(), "R-install-loss-dispatch-fails")).toEqual({ holds: true, observed: { dispatch: { code: "UNAVAILABLE" }, placement: "failed", terminalReason: true } });
    const accepted = { ...good(), firstDispatch: { result: { accepted: "active", ms: 61_000 }, placement: { state: "active", generation: 1 } } };
    expect(judged(accepted, "R-install-loss-dispatch-fails")).toEqual({ holds: false, observed: { dispatch: { accepted: "active", ms: 61_000 }, placement: "active", terminalReason: false } });
    expect(judgeHistory(hist(accepted), scenario, []).verdict).toBe("fail");
    const slow = { ...good(), firstDispatch: { result: { code: "TIMEOUT", message: "t", ms: 60_000 }, placement: null } };
    expect(judged(slow, "R-install-loss-dispatch-fails")).toEqual({ holds: false, observed: { dispatch: { code: "TIMEOUT" }, placement: null, terminalReason: false } });
  });

  it("R-install-loss-clean-reinstall: exactly one complete bundle of the placement's hash, nothing beside it, node.list installed", () => {
    const clean = { bundleDirs: 1, bundlesEntries: [HASH], hashMatches: true, receipt: true, workerMjs: true, strayReceipts: [], status: "installed" };
    expect(judged(good(), "R-install-loss-clean-reinstall")).toEqual({ holds: true, observed: clean });
    // A half-written directory beside it, no worker.mjs, node.list silent.
    const half = { ...good(), reinstall: { bundles: { bundles: [bundle({ files: ["bootstrap-receipt.json"] })], strayReceipts: [] }, entries: [HASH, `.${HASH}.tmp`], placementHash: HASH, openclawVersion: "2026.9.6", status: null } };
    expect(judged(half, "R-install-loss-clean-reinstall")).toEqual({ holds: false, observed: { ...clean, bundlesEntries: [HASH, `.${HASH}.tmp`], workerMjs: false, status: null } });
    // A receipt of another version does not hold, though each field the observed names looks right.
    const other = { ...good(), reinstall: { ...good().reinstall!, openclawVersion: "2026.9.5" } };
    expect(judged(other, "R-install-loss-clean-reinstall")).toEqual({ holds: false, observed: clean });
    // No bundle and no hash on the placement: nothing matches.
    const none = { ...good(), reinstall: { bundles: { bundles: [], strayReceipts: ["/home/lab/bootstrap-receipt.json"] }, entries: [], openclawVersion: "2026.9.6", status: null } };
    expect(judged(none, "R-install-loss-clean-reinstall")).toEqual({ holds: false, observed: { bundleDirs: 0, bundlesEntries: [], hashMatches: true, receipt: false, workerMjs: false, strayReceipts: ["/home/lab/bootstrap-receipt.json"], status: null } });
    expect(judgeHistory(hist(none), scenario, []).verdict).toBe("fail");
  });

  it("R-install-loss-turn: proven on the node; a failed turn does not hold and says why", () => {
    expect(judged(good(), "R-install-loss-turn")).toEqual({ holds: true, observed: { reply: "node-only marker", launches: 1 } });
    const failed = { ...good(), turn: turn({ reply: null, launches: [], error: "chat turn r in s ended with status error: boom" }) };
    expect(judged(failed, "R-install-loss-turn")).toEqual({ holds: false, observed: { reply: "none", launches: 0, error: "chat turn r in s ended with status error: boom" } });
    expect(judgeHistory(hist(failed), scenario, []).verdict).toBe("fail");
  });

  it("what the body never observed once it returned: the lab could not tell", () => {
    const { fresh, killAt, firstDispatch } = good();
    expect(judgeHistory(hist({ fresh, killAt, firstDispatch }), scenario, [])).toMatchObject({ verdict: "unknown", detail: "check R-install-loss-clean-reinstall had nothing to judge: the body returned without observing what it reads; also check R-install-loss-redispatch had nothing to judge: the body returned without observing what it reads; also check R-install-loss-turn had nothing to judge: the body returned without observing what it reads" });
  });
});
