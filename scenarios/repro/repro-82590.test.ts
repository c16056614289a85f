// repro-82590's checks on hand-made histories (no Docker): each holding and not, with exactly
// what it observed, and the registered finding (differs-from-reference) read as a known finding.
import { describe, expect, it } from "vitest";
import { asRecorded, deriveChecks, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-82590.ts";
import { historyOf } from "../../lab/testing/histories.ts";

const recorded = (o: Observed): Observations => asRecorded({ ...o });
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, recorded(o));
const reads = (o: Observed, id: string) => {
  const c = deriveChecks(scenario.checks ?? [], recorded(o), true).checks.find((x) => x.id === id);
  return c && { holds: c.holds, observed: c.observed, kind: c.kind };
};

/** As 2026.9.6 does (documented): paused, no connection for 30 s after the approval, the container running; the documented restart brings it back. */
const documented: Required<Observed> = {
  resumed: { held: false, last: { upgrades: 0, connects: 0, connected: false }, pausedAction: "waiting for operator action", container: { running: true, exitCode: null } },
  remedy: { held: true, last: { connects: 1, connected: true } },
};
const resumes: Observed = {
  resumed: { held: true, last: { upgrades: 1, connects: 1, connected: true }, pausedAction: "waiting for operator action", container: { running: true, exitCode: null } },
};

describe("R-82590-resume-after-approval", () => {
  const id = "R-82590-resume-after-approval";
  it("does not hold when the node opened no connection after the approval: the registered signature", () => {
    expect(reads(documented, id)).toEqual({
      holds: false,
      kind: "differs-from-reference",
      observed: { within_s: 30, refusedWith: "PAIRING_REQUIRED", pausedLog: "waiting for operator action", upgradesAfterApproval: 0, connectsAfterApproval: 0, connectedAfterApproval: false, nodeProcess: "running" },
    });
  });
  it("a node host that exits on the pause (the PR's proposal) reads a changed signature", () => {
    const exited: Observed = { resumed: { held: false, last: { upgrades: 0, connects: 0, connected: false }, pausedAction: "exiting for supervisor restart", container: { running: false, exitCode: 1 } } };
    expect(reads(exited, id)).toEqual({
      holds: false,
      kind: "differs-from-reference",
      observed: { within_s: 30, refusedWith: "PAIRING_REQUIRED", pausedLog: "exiting for supervisor restart", upgradesAfterApproval: 0, connectsAfterApproval: 0, connectedAfterApproval: false, nodeProcess: "exited 1" },
    });
  });
  it("holds when the node connected again by itself", () => {
    expect(reads(resumes, id)).toEqual({
      holds: true,
      kind: "differs-from-reference",
      observed: { within_s: 30, refusedWith: "PAIRING_REQUIRED", pausedLog: "waiting for operator action", upgradesAfterApproval: 1, connectsAfterApproval: 1, connectedAfterApproval: true, nodeProcess: "running" },
    });
  });
});

describe("R-82590-remedy", () => {
  const id = "R-82590-remedy";
  it("holds when the documented restart brought the node back", () => {
    expect(reads(documented, id)).toEqual({ holds: true, kind: undefined, observed: { within_s: 90, connects: 1, connected: true } });
  });
  it("does not hold when it did not", () => {
    expect(reads({ ...documented, remedy: { held: false, last: { connects: 0, connected: false } } }, id)).toEqual({ holds: false, kind: undefined, observed: { within_s: 90, connects: 0, connected: false } });
  });
  it("optional: not tried when the node came back by itself, and that is no problem", () => {
    const d = deriveChecks(scenario.checks ?? [], recorded(resumes), true);
    expect(d.checks.map((c) => c.id)).toEqual(["R-82590-resume-after-approval"]);
    expect(d.notes).toEqual([]);
  });
});

describe("repro-82590 judged", () => {
  it("the registered signature reads known-finding", () => {
    expect(judgeHistory(hist(documented), scenario, []).verdict).toBe("known-finding");
  });
  it("a node that resumes by itself: the registered finding reads fixed?", () => {
    expect(judgeHistory(hist(resumes), scenario, []).verdict).toBe("fixed?");
  });
  it("the documented remedy failing as well: fail", () => {
    expect(judgeHistory(hist({ ...documented, remedy: { held: false, last: { connects: 0, connected: false } } }), scenario, []).verdict).toBe("fail");
  });
});
