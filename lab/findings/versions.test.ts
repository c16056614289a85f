import { describe, expect, it } from "vitest";
import { compareVersions, inRange, oldest, parseRange, rangeVersions } from "./versions.ts";

describe("versions and ranges", () => {
  it("orders calendar versions numerically, a prerelease before its release", () => {
    expect(compareVersions("2026.10.1", "2026.9.6")).toBeGreaterThan(0);
    expect(compareVersions("2026.9.6-beta.1", "2026.9.6")).toBeLessThan(0);
    expect(oldest(["2026.9.6", "2026.9.4", "2026.10.1"])).toBe("2026.9.4");
  });

  it("a range is comparators that must all hold", () => {
    expect(inRange("2026.9.5", "2026.9.5")).toBe(true);
    expect(inRange("2026.9.6", "2026.9.5")).toBe(false);
    expect(inRange("2026.9.6", ">=2026.9.5")).toBe(true);
    expect(inRange("2026.9.4", ">=2026.9.5")).toBe(false);
    expect(inRange("2026.9.5", ">=2026.9.4 <2026.9.6")).toBe(true);
    expect(inRange("2026.9.6", ">=2026.9.4 <2026.9.6")).toBe(false);
    expect(inRange("2026.9.6", "<=2026.9.6")).toBe(true);
    expect(rangeVersions(">=2026.9.4 <2026.9.6")).toEqual(["2026.9.4", "2026.9.6"]);
  });

  it("a malformed range names the part and the form", () => {
    expect(() => parseRange("")).toThrow(/is empty/);
    expect(() => parseRange(">=2026.9")).toThrow(/">=2026.9" is not a comparator/);
    expect(() => parseRange("~2026.9.5")).toThrow(/not a comparator/);
  });
});
