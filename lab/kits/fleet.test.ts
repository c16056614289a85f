import { describe, expect, it } from "vitest";
import { percentiles, refusedBy } from "./fleet.ts";

describe("the fleet kit's figures", () => {
  it("percentiles by nearest rank, with a one-line text; an empty list reads zeros", () => {
    const p = percentiles(Array.from({ length: 100 }, (_, i) => i + 1));
    expect([p.p50, p.p95, p.p99, p.max]).toEqual([50, 95, 99, 100]);
    expect(p.text).toBe("n=100 p50 50 ms, p95 95 ms, p99 99 ms, max 100 ms");
    expect(percentiles([]).p95).toBe(0);
  });

  it("connects counted: admitted, and each refusal by its details code, else its code", () => {
    expect(refusedBy([{ admitted: true, ms: 1 }, { admitted: false, ms: 2, code: "NOT_PAIRED", detailsCode: "PAIRING_REQUIRED", message: "" }, { admitted: false, ms: 2, code: "HANDSHAKE_FAILED", message: "503" }])).toEqual({ admitted: 1, PAIRING_REQUIRED: 1, HANDSHAKE_FAILED: 1 });
  });
});
