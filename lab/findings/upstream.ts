// What OpenClaw's tracker says of the issue a field-bug repro reproduces (scenarios/repro/): its
// thread, whether it is open or closed, the pull request that fixed it and the release that
// shipped the fix, as read on the day `checked` names. A repro declares it
// (defineScenario({ upstream })); the bug report of its findings leads with it
// (lab/commands/issue-report.ts), so a maintainer reading the report sees at once whether it is
// a known issue, already fixed (then the report is no new report, or a regression of that fix),
// or open. Nothing here is guessed: a field the tracker (or the release notes) does not state is
// left out, and a status the thread does not show is "unknown".
import { z } from "zod";
import { compareVersions } from "./versions.ts";

const VERSION = /^\d{4}\.\d{1,2}\.\d+(?:-[0-9A-Za-z.-]+)?$/;

export const Upstream = z
  .object({
    /** The thread's number in openclaw/openclaw: an issue, or a pull request where the target has no issue (kind "pr"). */
    issue: z.number().int().positive(),
    /** "pr": the repro's target is a pull request (a regression target, or a PR that is the report). Default "issue". */
    kind: z.enum(["issue", "pr"]).optional(),
    /** The thread's title, as the tracker shows it. */
    title: z.string().min(1),
    /**
     * open: the thread is open. fixed: closed by a fix (a merged fix PR, or the target PR itself
     * merged). closed: closed, the thread names no fix. closed-not-fixed: closed without a fix
     * (a PR closed unmerged, an issue closed as not planned). unknown: the thread could not be read.
     */
    status: z.enum(["open", "fixed", "closed", "closed-not-fixed", "unknown"]),
    /** The pull request that fixes it (merged when status is fixed; may be open while the issue is). */
    fixPr: z.number().int().positive().optional(),
    /** The state of fixPr when it is not merged ("open": a fix is pending). */
    fixPrState: z.enum(["open", "closed"]).optional(),
    /** The first release carrying the fix, only where a source states it (see fixedInSource). */
    fixedIn: z.string().regex(VERSION).optional(),
    /** Where fixedIn comes from, one line: the release notes, or the lab's own reading of the packages. */
    fixedInSource: z.string().min(1).optional(),
    /** Other threads of the same bug (siblings, duplicates, a second issue the same fix closed). */
    related: z.array(z.number().int().positive()).optional(),
    /** The day the tracker was read (YYYY-MM-DD). */
    checked: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    /** The thread's address. */
    source: z.string().url(),
  })
  .strict()
  .superRefine((u, ctx) => {
    if (u.fixedIn && !u.fixedInSource) ctx.addIssue({ code: "custom", message: "fixedIn needs fixedInSource: where that version is stated" });
    if (u.fixedIn && u.status !== "fixed") ctx.addIssue({ code: "custom", message: `fixedIn given for a thread whose status is ${u.status}, not fixed` });
    if (u.fixPrState && !u.fixPr) ctx.addIssue({ code: "custom", message: "fixPrState without fixPr" });
    if (u.status === "fixed" && u.fixPrState) ctx.addIssue({ code: "custom", message: "a fixed thread's fix PR is merged: no fixPrState" });
    if (!u.source.includes(`/${u.issue}`)) ctx.addIssue({ code: "custom", message: `source ${u.source} is not the thread #${u.issue}` });
  });
export type Upstream = z.infer<typeof Upstream>;

/** The problems of an upstream record, one line each (empty when it is sound). */
export function upstreamProblems(u: unknown): string[] {
  const r = Upstream.safeParse(u);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".") || "upstream"}: ${i.message}`);
}

/** "openclaw#145189" (an issue) or "openclaw PR #82590" (a pull request). */
export const threadName = (u: Pick<Upstream, "issue" | "kind">): string => (u.kind === "pr" ? `openclaw PR #${u.issue}` : `openclaw#${u.issue}`);

/** How a finding seen on `version` stands against the tracker. */
export type Standing =
  /** Fixed upstream in a release newer than the version seen: known, fixed, not a new report. */
  | "fixed-later"
  /** Seen on the release that carries the fix, or a newer one: a regression of that fix. */
  | "regression"
  /** Fixed upstream, the release carrying the fix not stated. */
  | "fixed-release-unknown"
  /** Open upstream: known; the report adds evidence to that thread. */
  | "open"
  /** Closed without a stated fix, or closed unfixed. */
  | "closed"
  /** The tracker could not say. */
  | "unknown";

export function standing(u: Upstream, version: string): Standing {
  if (u.status === "fixed") {
    if (!u.fixedIn) return "fixed-release-unknown";
    return compareVersions(version, u.fixedIn) >= 0 ? "regression" : "fixed-later";
  }
  if (u.status === "open") return "open";
  if (u.status === "unknown") return "unknown";
  return "closed";
}

/** The tracker's state in a few words: "open, fix PR #148770 open", "fixed in 2026.9.5 by PR #145191"; `short` leaves out what is not stated (for a title). */
export function statusWords(u: Upstream, opts: { short?: boolean } = {}): string {
  const unstated = (words: string) => (opts.short ? "" : words);
  const pr = u.fixPr && u.fixPr !== u.issue ? ` by PR #${u.fixPr}` : "";
  switch (u.status) {
    case "open":
      return `open${u.fixPr ? `, fix PR #${u.fixPr} ${u.fixPrState ?? "open"}` : ", no fix PR"}`;
    case "fixed":
      return u.kind === "pr" && (!u.fixPr || u.fixPr === u.issue) ? `merged${u.fixedIn ? `, in ${u.fixedIn}` : unstated(", the release carrying it not stated")}` : `fixed${u.fixedIn ? ` in ${u.fixedIn}` : ""}${pr}${u.fixedIn ? "" : unstated(" (the release carrying it not stated)")}`;
    case "closed":
      return `closed${u.fixPr ? `, PR #${u.fixPr}` : opts.short ? ", no fix named" : ", the thread names no fix"}`;
    case "closed-not-fixed":
      return u.kind === "pr" ? "closed unmerged" : "closed, not fixed";
    default:
      return "status unknown";
  }
}
