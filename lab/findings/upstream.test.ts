import { describe, expect, it } from "vitest";
import { standing, statusWords, threadName, upstreamProblems, type Upstream } from "./upstream.ts";

const base: Upstream = { issue: 145189, title: "t", status: "fixed", fixPr: 145191, checked: "2026-12-03", source: "https://github.com/openclaw/openclaw/issues/145189" };

describe("an upstream record", () => {
  it("is sound only with what a source states: fixedIn needs its source and a fixed thread; fixPrState needs a fix PR; the address is the thread's", () => {
    expect(upstreamProblems(base)).toEqual([]);
    expect(upstreamProblems({ ...base, fixedIn: "2026.9.5" })).toEqual(["upstream: fixedIn needs fixedInSource: where that version is stated"]);
    expect(upstreamProblems({ ...base, status: "open", fixedIn: "2026.9.5", fixedInSource: "x" })).toEqual(["upstream: fixedIn given for a thread whose status is open, not fixed"]);
    expect(upstreamProblems({ ...base, fixPr: undefined, status: "open", fixPrState: "open" })).toEqual(["upstream: fixPrState without fixPr"]);
    expect(upstreamProblems({ ...base, source: "https://github.com/openclaw/openclaw/issues/1" })).toEqual(["upstream: source https://github.com/openclaw/openclaw/issues/1 is not the thread #145189"]);
    expect(upstreamProblems({ ...base, status: "gone" })[0]).toMatch(/^status: /);
    expect(upstreamProblems({ ...base, fixedIn: "9.5", fixedInSource: "x" })[0]).toMatch(/^fixedIn: /);
    expect(upstreamProblems({ ...base, extra: 1 })).toHaveLength(1);
  });

  it("stands against the version a finding was seen on: fixed later, a regression at or after the fix, open, closed, unknown", () => {
    const fixed = { ...base, fixedIn: "2026.9.5", fixedInSource: "release notes" };
    expect(standing(fixed, "2026.9.4")).toBe("fixed-later");
    expect(standing(fixed, "2026.9.5")).toBe("regression");
    expect(standing(fixed, "2026.9.6+0123456789")).toBe("regression");
    expect(standing(base, "2026.9.6")).toBe("fixed-release-unknown");
    expect(standing({ ...base, status: "open", fixPr: undefined }, "2026.9.6")).toBe("open");
    expect(standing({ ...base, status: "closed", fixPr: undefined }, "2026.9.6")).toBe("closed");
    expect(standing({ ...base, status: "closed-not-fixed", fixPr: undefined }, "2026.9.6")).toBe("closed");
    expect(standing({ ...base, status: "unknown", fixPr: undefined }, "2026.9.6")).toBe("unknown");
  });

  it("says its status in a few words, and names its thread as an issue or a pull request", () => {
    expect(statusWords({ ...base, fixedIn: "2026.9.5", fixedInSource: "x" })).toBe("fixed in 2026.9.5 by PR #145191");
    expect(statusWords(base)).toBe("fixed by PR #145191 (the release carrying it not stated)");
    expect(statusWords({ ...base, status: "open", fixPr: 148770, fixPrState: "open" })).toBe("open, fix PR #148770 open");
    expect(statusWords({ ...base, status: "open", fixPr: undefined })).toBe("open, no fix PR");
    expect(statusWords({ ...base, status: "closed", fixPr: undefined })).toBe("closed, the thread names no fix");
    expect(statusWords({ ...base, kind: "pr", issue: 82590, status: "closed-not-fixed", fixPr: undefined })).toBe("closed unmerged");
    expect(statusWords({ ...base, kind: "pr", issue: 137088, status: "fixed", fixPr: undefined })).toBe("merged, the release carrying it not stated");
    expect(statusWords({ ...base, status: "unknown", fixPr: undefined })).toBe("status unknown");
    expect(threadName(base)).toBe("openclaw#145189");
    expect(threadName({ issue: 82590, kind: "pr" })).toBe("openclaw PR #82590");
  });
});
