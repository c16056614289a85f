import { describe, expect, it } from "vitest";
import { compareVerdicts, verdictTable } from "./busy.ts";

describe("the busy-machine check's comparison", () => {
  it("a FAIL or UNKNOWN under load that the quiet run lacks is worse; the same verdict, or a known finding either way, is not", () => {
    const rows = compareVerdicts(
      { smoke: "pass", "abort-lost-ack": "known-finding", "pair-and-run": "pass", flaky: "unknown", gone: "pass" },
      { smoke: "pass", "abort-lost-ack": "fail", "pair-and-run": "unknown", flaky: "unknown" },
    );
    expect(rows.map((r) => [r.name, r.worse])).toEqual([
      ["smoke", false],
      ["abort-lost-ack", true],
      ["pair-and-run", true],
      ["flaky", false],
      ["gone", true],
    ]);
    expect(verdictTable(rows)).toMatch(/abort-lost-ack\s+KNOWN-FINDING\s+FAIL\s+WORSE under load/);
    expect(verdictTable(rows)).toMatch(/gone\s+PASS\s+-\s+WORSE under load/);
    // A fixed? under load where the quiet run saw the known finding claims what the quiet run does not (seen: capacity).
    expect(compareVerdicts({ capacity: "known-finding", r: "fixed?" }, { capacity: "fixed?", r: "fixed?" }).map((r) => r.worse)).toEqual([true, false]);
  });

  it("a stored quiet run of the whole suite is compared on the scenarios the loaded run planned only; one planned and missing is still worse", () => {
    const rows = compareVerdicts({ smoke: "pass", capacity: "known-finding", other: "pass" }, { smoke: "pass" }, ["smoke", "capacity"]);
    expect(rows.map((r) => [r.name, r.worse])).toEqual([
      ["smoke", false],
      ["capacity", true],
    ]);
  });
});
