// openclaw#155359 "[Bug]: 9 dual-monitor-verified SQLite write-transaction holds (5.9s-33.2s) on
// an awake Windows host in 2 days, all past busy_timeout=5000ms" (supersedes #154971 "Single
// SQLite write transactions hold the DB up to 65s ... guaranteeing SQLITE_BUSY for queued
// writers"), reported on 2026.9.4. Same family: #148307 (session writes fail with "database is
// locked" while reclamation holds the writer past the 5 s busy timeout) and #143640.
//
// Reporter's steps: ordinary use of one gateway (agent turns, cron); no controlled repro.
// Symptom: the gateway's own logs show write transactions (operation agent.write, ...) held
// longer than OpenClaw's fixed SQLite busy timeout (OPENCLAW_SQLITE_BUSY_TIMEOUT_MS = 5000), so
// any other writer queued behind one waits 5 s and fails ("SQLite transaction lock wait failed",
// SQLITE_BUSY "database is locked").
//
// How this lab reproduces it: the reporter's holds have no known cause, so the lab makes them
// with slow storage: faults.slowDisk delays every write syscall the gateway makes under its
// state directory (~/.openclaw, where its SQLite databases live). On a gateway-only lab, one
// agent turn runs on slowed state while the operator keeps patching the same session's label
// (sessions.patch, one after another, no sleeps), and a few more patches follow the turn's end.
//
// Premises (proven, else the verdict is unknown): P-155359-writes-delayed: strace counted the
// gateway's write syscalls it delayed (> 0) on the state path; P-155359-patches-beside-turn: at
// least one patch ran while the slow turn was in flight. Self-test (make repro NAME=repro-155359
// N=1 AIM_OFF=1), each premise on its own: the slow disk on AIM_OFF_PATH (a directory the gateway
// does not write) instead of its state, so no write is delayed; then the patches moved behind the
// turn's end, so none runs beside it. Each time the verdict must be unknown.
//
// Asserts what a user should see: a session patch during (or right after) a slow turn succeeds,
// perhaps slowly; it is not refused because another write held the database past 5 s.
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): WINDOW_S, the window
// the patches run in beside the slow turn.
import { defineScenario, labStep, LabInfraError, type FindingRecord } from "../../lab/scenario.ts";
import { faults } from "../../lab/faults/index.ts";
import { openSession, refusal, type Refused, type RunEnd } from "../../lab/kits/session.ts";
import { memberLog } from "../../lab/kits/logs.ts";
import { normalise } from "../../lab/findings/normalise.ts";

const NAME = "repro-155359";
/** Added to every write syscall under the gateway's state (strace delay_enter). */
const DELAY_MS = 100;
const STATE = "/home/lab/.openclaw";
/** Under --aim-off the slow disk is on a directory of the gateway's container it never writes. */
const AIM_OFF_PATH = "/var/tmp";
/** How long patches run beside the slow turn (then it is aborted), and how many follow its end. */
const WINDOW_S = 110;
const PATCHES_AFTER = 3;

// Seen on 2026.9.6 with 100 ms per write: while the turn ran, three patches in a row (about 65 s
// in) waited exactly SQLite's 5 s busy timeout at BEGIN on the agent database and were refused;
// the patches before and after them took ~3.4 s each and succeeded.
const findings: FindingRecord[] = [
  {
    id: "R-155359-patch-beside-slow-write",
    expectation: `every sessions.patch during and right after an agent turn on slow state storage (${DELAY_MS} ms per write) succeeds, however slowly; none is refused because another write held the database past SQLite's 5 s busy timeout`,
    signature: {
      refused: [{ code: "UNAVAILABLE", message: "Session patch failed unexpectedly. Retry the request." }],
      gatewayLog: { says: ["SQLite transaction lock wait failed", "database is locked"], operations: ["session.entry-replacements"] },
    },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: "fixtures/findings/R-155359-patch-beside-slow-write.json",
  },
];

interface PatchOutcome {
  n: number;
  phase: "healthy" | "during" | "after";
  ms: number;
  refused?: Refused;
}

/** What the body observed (JSON, for the history); the premises and the check below judge it. */
export interface Observed {
  /** strace's count of the write syscalls it delayed, as the heal reported it (null: not reported). */
  slowDisk?: { delayedCalls: unknown };
  /** The slow turn's end (agent.wait's status) or why its wait failed, and the patches in order. */
  patches?: { turn: { status: string } | { waitFailed: string | null }; patches: PatchOutcome[] };
  /** The gateway's log lines about its SQLite locks since the slow disk (epoch ms), and when the last patch ended. */
  gatewayLog?: { lockLines: { at: number; line: string }[]; patchedUntil: number };
}

/** A gateway log line about a SQLite lock failure. */
const LOCK_LINE = /lock wait failed|database is locked|SQLITE_BUSY/i;

/** The lock lines the signature reads: up to 1 s after the last patch (the gateway's log up to the last patch, not the abort's own writes). */
const lockLinesOf = (g: NonNullable<Observed["gatewayLog"]>): string[] => g.lockLines.filter((l) => l.at <= g.patchedUntil + 1_000 && LOCK_LINE.test(l.line)).map((l) => l.line);

export default defineScenario<Observed>({
  name: NAME,
  upstream: {
    issue: 155359,
    title: "[Bug]: 9 dual-monitor-verified SQLite write-transaction holds (5.9s-33.2s) on an awake Windows host in 2 days, all past busy_timeout=5000ms - plus: gateway freeze detector reports freezes the process",
    status: "open",
    related: [154971, 148307, 143640],
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/155359",
  },
  protocolSteps: [
    "Slow every write the gateway makes under its state directory (`~/.openclaw`, its SQLite databases) by 100 ms.",
    "As an operator, `chat.send` one message to a session (an agent turn writes its state).",
    "While that turn runs and just after it, send `{\"type\":\"req\",\"method\":\"sessions.patch\",\"params\":{\"key\":\"<session>\",\"label\":\"<n>\"}}` one after another.",
    "Some are answered `UNAVAILABLE` \"Session patch failed unexpectedly. Retry the request.\" after about 5 s, with \"SQLite transaction lock wait failed\" / \"database is locked\" in the gateway's log (expected: every patch succeeds, however slowly).",
  ],
  proves: "openclaw#155359: a sessions.patch during or right after an agent turn on slow state storage succeeds, perhaps slowly; it is not refused because another write held the database past SQLite's 5 s busy timeout",
  topology: "own",
  spec: { nodes: { count: 0 }, git: { enabled: false }, mcp: { servers: [] } },
  findings,
  premises: [
    {
      id: "P-155359-writes-delayed",
      what: `the gateway's writes under its state directory were really delayed (${DELAY_MS} ms each, counted by strace) while the patches ran`,
      aimOff: `the slow disk on ${AIM_OFF_PATH} instead of ${STATE}`,
      judge: (h) => {
        if (!h.slowDisk) return undefined;
        const delayed = h.slowDisk.delayedCalls;
        return { met: typeof delayed === "number" && delayed > 0, observed: { delayedCalls: delayed ?? null, delayMs: DELAY_MS } };
      },
    },
    {
      id: "P-155359-patches-beside-turn",
      what: "at least one sessions.patch ran while the slow turn was in flight",
      aimOff: "the patches start only once the slow turn has ended (its agent.wait answered)",
      judge: (h) => {
        if (!h.patches) return undefined;
        const during = h.patches.patches.filter((p) => p.phase === "during").length;
        const turn = h.patches.turn;
        return { met: during > 0, observed: { patchesDuringTurn: during, turn: "status" in turn ? turn.status : `agent.wait failed: ${turn.waitFailed ?? "?"}` } };
      },
    },
  ],
  checks: [
    {
      id: "R-155359-patch-beside-slow-write",
      expectation: `every sessions.patch during and right after an agent turn on slow state storage (${DELAY_MS} ms per write) succeeds, however slowly; none is refused because another write held the database past SQLite's 5 s busy timeout`,
      judge: (h) => {
        if (!h.patches || !h.gatewayLog) return undefined;
        // What the gateway said about its SQLite locks meanwhile (the operation names are stable).
        const lockLines = lockLinesOf(h.gatewayLog);
        const says = ["SQLite transaction lock wait failed", "database is locked", "SQLITE_BUSY"].filter((p) => lockLines.some((l) => l.includes(p)));
        const operations = [...new Set(lockLines.flatMap((l) => [...l.matchAll(/operation[=:"\s]+([a-zA-Z0-9_.-]+)/g)].map((m) => m[1]!)))].sort();
        const refused = h.patches.patches.filter((p) => p.refused);
        const distinct = [...new Map(refused.map((p) => [JSON.stringify(p.refused), p.refused!])).values()];
        return {
          holds: refused.length === 0,
          observed: normalise({
            refused: distinct.map((r) => ({ code: r.code, ...(r.detailsCode ? { detailsCode: r.detailsCode } : {}), message: r.message })),
            gatewayLog: lockLines.length ? { says, operations } : "no lock failure logged",
          }),
        };
      },
    },
  ],
  timeoutMs: 240_000,
  async run({ lab, log, observe, aimOff }) {
    const client = lab.operator.client;
    const s = await openSession(lab);
    let label = 0;
    const patch = async (n: number, phase: PatchOutcome["phase"]): Promise<PatchOutcome> => {
      const t0 = performance.now();
      try {
        await client.request("sessions.patch", { key: s.key, label: `${NAME} ${phase} ${++label}` }, { timeoutMs: 60_000 });
        return { n, phase, ms: Math.round(performance.now() - t0) };
      } catch (err) {
        return { n, phase, ms: Math.round(performance.now() - t0), refused: refusal(err) };
      }
    };

    // Healthy first: the session exists (created by its first turn) and a patch works.
    const first = await s.turn("hello before the slow disk", 60_000);
    if (first.status !== "ok") throw new LabInfraError(`the first turn on healthy storage did not end ok (${first.status}): nothing to compare with`);
    const baseline = await patch(0, "healthy");
    if (baseline.refused) throw new LabInfraError(`sessions.patch on healthy storage was refused: ${JSON.stringify(baseline.refused)}`);
    log(`healthy: first turn ${first.ms} ms, sessions.patch ${baseline.ms} ms`);

    const slow = faults.slowDisk(lab, lab.spec.gateway.alias, { path: aimOff === "P-155359-writes-delayed" ? AIM_OFF_PATH : STATE, delayMs: DELAY_MS });
    const injected = await labStep("slowing the gateway's state disk", () => slow.inject());
    log(`slow disk in effect: ${JSON.stringify(injected.detail)}`);
    const sinceMs = Date.now();

    const { runId } = await s.send("hello on a slow disk");
    let end: RunEnd | undefined;
    // Both outcomes handled at once: the wait runs beside the patch loop, and a wait that fails
    // meanwhile (on this slow disk the gateway once left agent.wait unanswered past 115 s) is an
    // observation of the turn, not an error nobody awaits (Node would end the whole run on it).
    let waitFailed: Error | undefined;
    // expectation: WINDOW_S is the observation window: its length decides how many patches are judged; fixed, not paced
    const ended = s.wait(runId, WINDOW_S * 1000, { expectation: true }).then(
      (e) => void (end = e),
      (err: unknown) => void (waitFailed = err instanceof Error ? err : new Error(String(err))),
    );
    const patches: PatchOutcome[] = [];
    const stopAt = performance.now() + WINDOW_S * 1000; // fixed: expectation: the observation window WINDOW_S (its length decides how many patches are judged)
    // Aimed off: the patches move behind the turn's end, so none runs beside it.
    if (aimOff === "P-155359-patches-beside-turn") await ended;
    // Patch until the turn ends (or its wait fails), a patch is refused (the shape is then known), or the window closes.
    while (!end && !waitFailed && !patches.some((p) => p.refused) && performance.now() < stopAt) patches.push(await patch(patches.length + 1, "during"));
    let patchedUntil = Date.now(); // the signature reads the gateway's log up to the last patch, not the abort's own writes
    if (!end) {
      const aborted = await s.abort(runId);
      log(`turn still running after ${patches.length} patch(es): chat.abort -> ${JSON.stringify(aborted).slice(0, 200)}`);
    } else {
      for (let i = 0; i < PATCHES_AFTER; i++) patches.push(await patch(patches.length + 1, "after"));
      patchedUntil = Date.now();
    }
    await ended;
    log(`slow turn: ${end ? `${end.status} after ${end.ms} ms` : `agent.wait failed (${waitFailed?.message})`}; patches: ${patches.map((p) => `#${p.n} ${p.phase} ${p.ms} ms${p.refused ? ` REFUSED ${p.refused.code}` : ""}`).join(", ")}`);

    const healed = await labStep("healing the slow disk", () => slow.heal());
    log(`healed: ${JSON.stringify(healed.detail)}`);
    // The fault acted on the path (P-155359-writes-delayed): strace's own count of the write syscalls it delayed.
    const delayed = (healed.detail as { delayedCalls?: unknown } | undefined)?.delayedCalls;
    observe("slowDisk", { delayedCalls: delayed ?? null });

    // What the gateway said about its SQLite locks meanwhile (R-155359-patch-beside-slow-write reads it).
    const gatewayLog = { lockLines: (await memberLog(lab, lab.spec.gateway.alias, sinceMs)).filter((l) => LOCK_LINE.test(l.line)).map((l) => ({ at: l.at, line: l.line })), patchedUntil };
    for (const l of lockLinesOf(gatewayLog).slice(0, 5)) log(`gateway: ${l.slice(0, 400)}`);

    // P-155359-patches-beside-turn and R-155359-patch-beside-slow-write read the patches.
    observe("patches", { turn: end ? { status: end.status } : { waitFailed: waitFailed?.message ?? null }, patches });
    observe("gatewayLog", gatewayLog);
  },
});
