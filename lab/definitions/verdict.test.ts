import { describe, expect, it } from "vitest";
import { Judgement, accepted, exitCodeOf, worse } from "./verdict.ts";

describe("verdict rule", () => {
  it("worse: fail, then unknown, then known finding, then fixed?, then pass", () => {
    expect(worse("pass", "fixed?")).toBe("fixed?");
    expect(worse("known-finding", "fixed?")).toBe("known-finding");
    expect(worse("known-finding", "unknown")).toBe("unknown");
    expect(worse("fail", "unknown")).toBe("fail");
    expect(worse("unknown", "fail")).toBe("fail");
  });

  it("exit codes: 1 for any fail, else 3 for any unknown, else 0", () => {
    expect(exitCodeOf(["pass", "fixed?", "known-finding"])).toBe(0);
    expect(exitCodeOf(["unknown", "pass"])).toBe(3);
    expect(exitCodeOf(["unknown", "fail", "pass"])).toBe(1);
    expect(accepted("fixed?")).toBe(true);
    expect(accepted("unknown")).toBe(false);
  });
});

describe("Judgement", () => {
  it("nothing wrong is a pass with no detail", () => {
    const j = new Judgement();
    expect([j.verdict, j.detail]).toEqual(["pass", undefined]);
  });

  it("what the scenario saw: the worst wins, and its reason leads", () => {
    const j = new Judgement().add("unknown", "the model died").add("fail", "E-x: not met");
    expect([j.verdict, j.detail]).toEqual(["fail", "E-x: not met; also the model died"]);
  });

  it("what the runner finds afterwards sets the verdict only of an accepted scenario", () => {
    const passed = new Judgement().add("known-finding", "known-finding F-a").after("fail", "teardown left resources behind: c1");
    expect([passed.verdict, passed.detail]).toEqual(["fail", "teardown left resources behind: c1; also known-finding F-a"]);
    const unknown = new Judgement().add("unknown", "tap unreadable").after("fail", "teardown left resources behind: c1");
    expect([unknown.verdict, unknown.detail]).toEqual(["unknown", "tap unreadable; also teardown left resources behind: c1"]);
    const failed = new Judgement().add("fail", "no reply").after("unknown", "could not undo: heal (x)");
    expect([failed.verdict, failed.detail]).toEqual(["fail", "no reply; also could not undo: heal (x)"]);
  });

  it("also() says something without changing the verdict", () => {
    const j = new Judgement().also("replaced the shared lab");
    expect([j.verdict, j.detail]).toEqual(["pass", "replaced the shared lab"]);
  });
});
