import { describe, expect, it } from "vitest";
import { normalise, normaliseText } from "./normalise.ts";

describe("signatures without per-run noise", () => {
  it("ids, times and lab names read the same on every run; the behaviour stays", () => {
    const a = normalise({ error: "run 3f1c2a9e-1b2c-4d5e-8f90-a1b2c3d4e5f6 aborted at 2026-11-30T10:01:02.123Z", session: "agent:main:fleetlab-3fa2c1", at: 1764496862123, waitedMs: 412, code: "UNAVAILABLE", attempts: 2 });
    const b = normalise({ error: "run 99999999-1b2c-4d5e-8f90-a1b2c3d4e5f6 aborted at 2026-12-01T00:00:00Z", session: "agent:main:fleetlab-00aa11", at: 1764500000000, waitedMs: 9, code: "UNAVAILABLE", attempts: 2 });
    expect(a).toEqual(b);
    expect(a).toEqual({ error: "run <uuid> aborted at <time>", session: "agent:main:fleetlab-<id>", at: "<n>", waitedMs: "<n>", code: "UNAVAILABLE", attempts: 2 });
  });

  it("a bound the signature asserts can be kept; long hex (hashes, node ids) becomes <id>", () => {
    expect(normalise({ within_s: 30, seq: 4, tookMs: 80 }, { keep: ["seq"] })).toEqual({ within_s: 30, seq: 4, tookMs: "<n>" });
    expect(normaliseText("node 6f1e2d3c4b5a69788796a5b4c3d2e1f0 gone")).toBe("node <id> gone");
    expect(normalise([{ nested: { startedAt: 5 } }])).toEqual([{ nested: { startedAt: "<n>" } }]);
  });
});
