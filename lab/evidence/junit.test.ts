import { describe, expect, it } from "vitest";
import { junitXml } from "./junit.ts";
import type { RunRecord } from "./run.ts";

const record: RunRecord = {
  id: "r1",
  startedAt: "2026-11-30T06:00:00.000Z",
  seed: 7,
  host: { platform: "linux-x64", cpus: 2, memGiB: 24, node: "v24" },
  timings: {},
  plan: ["pair", "capacity", "partition", "smoke", "loss"],
  scenarios: [
    { name: "pair", verdict: "pass", seconds: 12.5 },
    { name: "capacity", verdict: "known-finding", seconds: 80 },
    { name: "partition", verdict: "fail", seconds: 3, detail: "node <node-1> & \"x\" stayed connected" },
    { name: "smoke", verdict: "unknown", seconds: 1, detail: "the lab could not come up: gateway exited (code 1)" },
  ],
  findings: [{ findingId: "F-cap", scenario: "capacity", expectation: "the turn waits for a slot", outcome: "known-finding", observed: { agentWait: "error" }, kind: "shortfall" }],
};

describe("junit.xml", () => {
  const xml = junitXml(record);
  const tc = (name: string) => xml.match(new RegExp(`<testcase[^>]*name="${name}"[\\s\\S]*?(</testcase>|/>)`))?.[0] ?? "";

  it("one test case per planned scenario", () => {
    expect(xml.match(/<testcase /g)).toHaveLength(5);
  });
  it("a known finding passes, with the finding in its output", () => {
    expect(tc("capacity")).not.toMatch(/<failure|<error/);
    expect(tc("capacity")).toContain("known-finding F-cap (shortfall)");
    expect(tc("capacity")).toContain('observed: {"agentWait":"error"}');
  });
  it("fail is a failure, unknown an error with its reason, never a pass; what never ran is skipped with the reason", () => {
    expect(tc("partition")).toMatch(/<failure message="node &lt;node-1> &amp; &quot;x&quot; stayed connected"/);
    expect(tc("smoke")).toMatch(/<error message="unknown: the lab could not come up: gateway exited \(code 1\)" type="unknown"/);
    expect(tc("loss")).toMatch(/<skipped\/>/);
    expect(xml.match(/name="loss">[\s\S]*?<\/testcase>/)?.[0]).toContain("not run: the run was cut before this scenario");
    expect(tc("pair")).not.toMatch(/<failure|<error/);
  });
});
