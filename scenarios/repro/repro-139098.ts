// Upstream: openclaw/openclaw#139098 "One-shot automation session cannot be deleted: leftover
// non-terminal row in worker_session_placements (cloud worker placement identity changed)" (open),
// reported on 2026.9.1, seen again on 2026.9.3. Same family: #136865, #138299 (closed by PR
// #138322 "fix(cron): clean up placed sessions when jobs are removed", merged 2026-09-06: session-
// backed removal goes through the gateway's deletion lifecycle and accepts the canonical cron
// base/run relationship) and PR #139313 (tests of the run-alias placement lifecycle, open).
//
// Reporter's steps: a one-shot automation (schedule {kind: "at"}, deleteAfterRun: true, payload
// agentTurn, sessionTarget isolated) fires, runs and is deleted from the jobs as designed; its
// session agent:main:cron:<jobId> stays. Symptom: deleting that session (Control UI or `openclaw
// sessions delete <key>`, i.e. sessions.delete) always fails with "Session agent:main:cron:<jobId>
// could not safely stop before deletion: ... cloud worker placement identity changed", across
// retries and gateway restarts, because worker_session_placements keeps a row for the run under the
// run-alias key agent:main:cron:<jobId>:run:<sessionId> (state local) that the delete's guard
// compares with the base key. No cloud workers are needed: every turn writes a local placement.
//
// What the user should have seen (asserted, R-139098-cron-session-deletable): once the one-shot
// has run, its session is deletable: either the job's own clean-up already removed the session and
// its placement, or sessions.delete on the session's key answers ok; afterwards sessions.list has
// no row of the job and the gateway's state holds no placement row of the job's sessions.
//
// How this lab gets there: a gateway-only lab (no node). cron.add creates the reporter's job
// (at: 3 s ahead, deleteAfterRun, isolated agentTurn, delivery none), and a second one like it
// but keeping its session once the first run is held (see run()); the model holds the run's
// request so the placement can be read while the run is in flight, then answers; the job's run is
// followed on cron.runs. The placement is read where it lives: worker_session_placements in the
// gateway's SQLite state (read-only, inside the gateway's container). Premise
// P-139098-run-placement: while the run was in flight the gateway's state held a placement row of
// the job's session (its key agent:main:cron:<jobId> or a :run: alias of it). Aimed off
// (AIM_OFF=1): the job is due in an hour, so no run happens within the wait and no row exists.
// Out of reach: the reporter's Windows service and announce delivery (delivery none here: no chat
// channel in the lab); the "identity changed" guard itself is read only through its RPC answer.
//
// Outcome on 2026.9.6 (2026-12-02): not reproduced (pass), run 20261202-030225-2e92355fab20a2d6.
// Both runs wrote the reporter's row while in flight: worker_session_placements {session_key
// agent:main:cron:<jobId>:run:<sessionId>, state local}. delete-after-run: the job's clean-up then
// removed the job, its session and that row (nothing left to delete). keep-session: after the run
// the base session was listed and the run-alias row (state local) was still there, the reporter's
// exact state; sessions.delete on the base key answered ok {deleted: true} and the row was gone at
// the next read. The guard in 2026.9.6 accepts the cron base/run relationship (PR #138322).
// Premise self-test: caught the miss 1/1 (run 20261202-031003-84f268159b7dd08b). On a machine
// under heavy load (load average ~20 on 2 cores) the run's model request came ~2 min after the
// job was due and sessions.list once took over 30 s: hence the generous bounds.
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): HELD_S (a run not
// held within it reads the premise unmet) and the polls' RUN_S, SETTLE_S, GONE_S.
// The body drives and observes (ctx.observe); the premise and the check below judge what it observed.
import { defineScenario, LabInfraError, type FindingRecord } from "../../lab/scenario.ts";
import { refusal, isRefused, type Refused } from "../../lab/clients/operator.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { armHold } from "../../lab/kits/session.ts";
import { scene } from "../../lab/kits/scene.ts";
import { pollUntil } from "../../lab/core/wait.ts";
import type { Lab } from "../../lab/topology/lab.ts";

const NAME = "repro-139098";
const TOKEN = "fleetlab-139098-one-shot";
/** The job is due this far ahead (aimed off: an hour). */
const DUE_MS = 3_000;
/** For the run's model request to be held, for the run to end, for the clean-up to settle. */
const HELD_S = 120;
const RUN_S = 90;
const SETTLE_S = 15;
/** Per request: on a loaded machine the gateway answered sessions.list after more than 30 s. */
const RPC_MS = 60_000;
/** From the delete's answer to the job's sessions and placement rows gone. */
const GONE_S = 10;

/**
 * The reporter's job (deleteAfterRun: its clean-up should take the session with it, or leave it
 * deletable), and the same one-shot keeping its session (the comments' wider scope: any cron
 * session whose run left a run-alias placement), whose session the user deletes.
 */
const VARIANTS = [
  { name: "delete-after-run", deleteAfterRun: true },
  { name: "keep-session", deleteAfterRun: false },
] as const;
type Job = (typeof VARIANTS)[number] & { token: string; id: string; baseKey: string };

const EXPECTATION =
  "once a one-shot isolated automation has run (with deleteAfterRun, and without it), its session is deletable: the job's clean-up removed it, or sessions.delete on its key answers ok; afterwards sessions.list has no row of the job and the gateway's state no placement row of it";

const findings: FindingRecord[] = [];

interface PlacementRow {
  session_id: string;
  session_key: string;
  state: string;
  execution_mode: string | null;
}

/**
 * worker_session_placements rows whose key is the job's session key or one of its :run: aliases,
 * read from the gateway's SQLite state. "No rows" is what the bug check passes on, so a reader
 * that cannot read is the lab's failure (unknown), never an empty answer: no state file, or files
 * that would not open or answer while none answered with the table, is thrown as a LabInfraError
 * naming them (before, both read "no rows").
 */
async function placementRows(lab: Lab, baseKey: string): Promise<PlacementRow[]> {
  const js = `
const { DatabaseSync } = require("node:sqlite");
const fs = require("node:fs"), path = require("node:path");
const out = []; const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else if (e.name.endsWith(".sqlite")) out.push(p); } };
walk(process.env.HOME + "/.openclaw");
const rows = [], errors = [], withTable = [];
for (const f of out) {
  let db; try { db = new DatabaseSync(f, { readOnly: true }); } catch (e) { errors.push(f + ": " + e.message); continue; }
  try {
    const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'worker_session_placements'").get();
    if (has) { withTable.push(f); rows.push(...db.prepare("SELECT session_id, session_key, state, execution_mode FROM worker_session_placements WHERE session_key = ? OR session_key LIKE ?").all(process.argv[1], process.argv[1] + ":run:%")); }
  } catch (e) { errors.push(f + ": " + e.message); }
  db.close();
}
process.stdout.write(JSON.stringify({ files: out.length, withTable, errors, rows }));`;
  const r = await lab.exec(lab.gateway.alias, ["node", "--no-warnings", "-e", js, baseKey]);
  if (r.exitCode !== 0) throw new LabInfraError(`reading worker_session_placements in the gateway exited ${r.exitCode}: ${(r.stderr || r.stdout).slice(0, 400)}`);
  const got = JSON.parse(r.stdout) as { files: number; withTable: string[]; errors: string[]; rows: PlacementRow[] };
  // The gateway holds its lock databases (tmp/*.lock.sqlite) locked: a file that would not answer
  // matters only when no file answered with the table (it could have been the one holding it).
  if (got.errors.length && !got.withTable.length) throw new LabInfraError(`reading worker_session_placements in the gateway: no state file answered with the table, and ${got.errors.join("; ").slice(0, 400)}`);
  // No state file at all: the lab is reading the wrong place. A state file without the table yet: no placement was ever written.
  if (!got.files) throw new LabInfraError("no SQLite state file under the gateway's ~/.openclaw: the lab cannot tell whether a placement row is left");
  return got.rows;
}

const keyShape = (key: string, baseKey: string): string => (key === baseKey ? "base" : key.startsWith(`${baseKey}:run:`) ? "run-alias" : "other");
const shapes = (rows: PlacementRow[], baseKey: string) => rows.map((r) => ({ keyShape: keyShape(r.session_key, baseKey), state: r.state }));

/** One job's run while its model request was held: held within HELD_S or not, and the job's placement rows meanwhile. */
interface During {
  name: string;
  baseKey: string;
  held: boolean;
  placements: PlacementRow[];
}

/** The job's sessions as sessions.list names them, and its placement rows in the gateway's state. */
interface Sessions {
  listed: string[];
  placements: PlacementRow[];
}

/** One job after its run: the run's end, the job removed, its sessions then, the delete's answer, its sessions at the end of the GONE_S poll. */
interface After {
  name: string;
  baseKey: string;
  runStatus: string | null;
  jobRemoved: boolean;
  afterRun: Sessions;
  /** sessions.delete's answer (a refusal as data), or "nothing to delete" when no session of the job was listed. */
  deleted: Record<string, unknown> | Refused | "nothing to delete";
  afterDelete: Sessions;
}

export interface Observed {
  /** In VARIANTS order. */
  during?: During[];
  after?: After[];
}

/** The job's sessions and placement rows gone (what the GONE_S poll waits for). */
const gone = (v: Sessions): boolean => v.listed.length === 0 && v.placements.length === 0;

export default defineScenario<Observed>({
  name: NAME,
  upstream: {
    issue: 139098,
    title: "One-shot automation session cannot be deleted: leftover non-terminal row in worker_session_placements (cloud worker placement identity changed)",
    status: "open",
    related: [136865, 138299],
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/139098",
  },
  proves: "openclaw#139098: the session of a one-shot automation that has run can be deleted (no leftover placement row blocks sessions.delete)",
  topology: "own",
  spec: { nodes: { count: 0 }, git: { enabled: false }, mcp: { servers: [] } },
  needs: [{ method: "cron.add" }, { method: "cron.runs" }, { method: "sessions.delete" }],
  bug: ["R-139098-cron-session-deletable"],
  findings,
  premises: [
    {
      id: "P-139098-run-placement",
      what: "while the one-shot's run was in flight, the gateway's state (worker_session_placements) held a placement row of the job's session (its key or a :run: alias of it)",
      aimOff: "the job is due in an hour: no run within the wait, no placement row",
      judge: (h) =>
        h.during && {
          met: h.during.every((j) => j.held && j.placements.length > 0),
          observed: Object.fromEntries(h.during.map((j) => [j.name, { runHeld: j.held, placements: shapes(j.placements, j.baseKey) }])),
        },
    },
  ],
  checks: [
    {
      id: "R-139098-cron-session-deletable",
      expectation: EXPECTATION,
      judge: (h) => {
        if (!h.after) return undefined;
        const refusedOf = (j: After) => (typeof j.deleted === "object" && isRefused(j.deleted) ? j.deleted : undefined);
        const outcome = Object.fromEntries(
          h.after.map((j) => {
            const refused = refusedOf(j);
            return [
              j.name,
              {
                runStatus: j.runStatus,
                jobRemoved: j.jobRemoved,
                listedAfterRun: j.afterRun.listed.map((k) => keyShape(k, j.baseKey)),
                placementsAfterRun: shapes(j.afterRun.placements, j.baseKey),
                delete: j.deleted === "nothing to delete" ? j.deleted : refused ? { code: refused.code, message: refused.message } : "ok",
                listedAfter: j.afterDelete.listed.map((k) => keyShape(k, j.baseKey)),
                placementsAfter: shapes(j.afterDelete.placements, j.baseKey),
              },
            ];
          }),
        );
        return { holds: h.after.every((j) => !refusedOf(j) && gone(j.afterDelete)), observed: normalise({ within_s: GONE_S, ...outcome }) };
      },
    },
  ],
  timeoutMs: 360_000,
  async run(ctx) {
    const { lab, log, observe, aimOff, signal } = ctx;
    const client = lab.operator.client;
    await scene(ctx, { faults: false, evidence: { bounds: { DUE_MS, HELD_S, RUN_S, SETTLE_S, GONE_S } } }, async ({ evidence }) => {
      const listedKeys = async (baseKey: string): Promise<string[]> =>
        ((await client.request<{ sessions?: { key: string }[] }>("sessions.list", {}, { timeoutMs: RPC_MS })).sessions ?? []).map((s) => s.key).filter((k) => k === baseKey || k.startsWith(`${baseKey}:`));

      // ---- the one-shots one after another: each created once the one before has its run's model
      // request held (so both runs are in flight together), the placement read where it lives.
      // Not created together: two isolated one-shots due at the same instant on a gateway whose
      // agent database does not exist yet raced its creation, and one run ended at once with
      // "Session metadata unavailable (schema-missing); retry after the agent store is ready"
      // before any model request (2026.9.6, three lanes on 2 cores, run 20261203-225451): no
      // placement to read, the premise unmet, the lab unable to tell. That race is not this repro's.
      const jobs: Job[] = [];
      const during: Record<string, { held: boolean; placements: PlacementRow[] }> = {};
      for (const variant of VARIANTS) {
        const token = `${TOKEN}-${variant.name}`;
        await armHold(lab, token);
        const at = new Date(Date.now() + (aimOff ? 3_600_000 : DUE_MS)).toISOString(); // fixed: not a deadline: the one-shot's due time, handed to cron.add
        const job = await client.request<Record<string, unknown>>("cron.add", {
          name: `${NAME} ${variant.name}`,
          schedule: { kind: "at", at },
          sessionTarget: "isolated",
          wakeMode: "now",
          deleteAfterRun: variant.deleteAfterRun,
          delivery: { mode: "none" },
          payload: { kind: "agentTurn", message: `${token}: say done` },
        });
        const id = String(job.id ?? job.jobId);
        const j: Job = { ...variant, token, id, baseKey: `agent:main:cron:${id}` };
        jobs.push(j);
        log(`cron.add ${variant.name} (deleteAfterRun ${variant.deleteAfterRun}) -> job ${id} at ${at}`);
        // expectation: a time-out is "run not held" in P-139098-run-placement: the HELD_S window is fixed, not paced
        const held = await lab.model.waitForHeld(HELD_S * 1000, (h) => h.userText.includes(j.token), signal, { expectation: true }).catch(() => undefined);
        during[j.name] = { held: held !== undefined, placements: await placementRows(lab, j.baseKey) };
        log(`${j.name}: model request ${held ? "held" : `not held within ${HELD_S} s`}; placement rows of the job meanwhile: ${JSON.stringify(during[j.name]!.placements)}`);
      }
      evidence.jobs = jobs;
      evidence.during = during;
      // What P-139098-run-placement reads.
      observe("during", jobs.map((j) => ({ name: j.name, baseKey: j.baseKey, ...during[j.name]! })));
      await lab.model.release();
      const anyHeld = jobs.some((j) => during[j.name]!.held);

      // ---- each run ends (cron.runs) and settles (a deleteAfterRun job leaves cron.list); then the user deletes the session
      const afterAll: After[] = [];
      for (const j of jobs) {
        const runs = await pollUntil(
          `${j.name}: the one-shot's run ended`,
          () => client.request<{ entries?: Record<string, unknown>[] }>("cron.runs", { id: j.id, scope: "job" }, { timeoutMs: RPC_MS }),
          (r) => (r.entries ?? []).some((e) => ["ok", "error", "skipped"].includes(String(e.status))),
          { deadlineMs: (anyHeld ? RUN_S : 1) * 1000, signal },
        ).catch(() => undefined);
        const runEntry = runs?.last.entries?.find((e) => ["ok", "error", "skipped"].includes(String(e.status)));
        const jobGone = await pollUntil(
          `${j.name}: the one-shot job removed after its run`,
          () => client.request<{ jobs?: { id?: string }[] }>("cron.list", { includeDisabled: true }, { timeoutMs: RPC_MS }),
          (r) => !(r.jobs ?? []).some((x) => x.id === j.id),
          { deadlineMs: (anyHeld && j.deleteAfterRun ? SETTLE_S : 1) * 1000, signal },
        );
        const before = { listed: await listedKeys(j.baseKey), placements: await placementRows(lab, j.baseKey) };
        log(`${j.name}: run ${runEntry ? String(runEntry.status) : "not seen ending"}; job ${jobGone.held ? "removed" : "still listed"}; sessions listed: ${JSON.stringify(before.listed)}; placement rows: ${JSON.stringify(before.placements)}`);

        // what the user does: delete the session (its base key, as the reporter did; else a listed run row)
        const target = before.listed.includes(j.baseKey) ? j.baseKey : before.listed[0];
        let deleted: Record<string, unknown> | Refused | "nothing to delete" = "nothing to delete";
        if (target) deleted = await client.request<Record<string, unknown>>("sessions.delete", { key: target }, { timeoutMs: 60_000 }).catch(refusal);
        log(`${j.name}: sessions.delete ${target ?? "(none listed)"} -> ${JSON.stringify(deleted)}`);
        const after = await pollUntil(
          `${j.name}: the job's sessions and placement rows gone`,
          async () => ({ listed: await listedKeys(j.baseKey), placements: await placementRows(lab, j.baseKey) }),
          gone,
          { deadlineMs: GONE_S * 1000, signal },
        );
        log(`${j.name}: afterwards sessions listed ${JSON.stringify(after.last.listed)}; placement rows ${JSON.stringify(after.last.placements)}`);
        evidence[j.name] = { run: runEntry ?? null, jobRemoved: jobGone.held, afterRun: before, delete: { target: target ?? null, answer: deleted }, afterDelete: after.last };
        afterAll.push({ name: j.name, baseKey: j.baseKey, runStatus: runEntry ? String(runEntry.status) : null, jobRemoved: jobGone.held, afterRun: before, deleted, afterDelete: after.last });
      }
      // What R-139098-cron-session-deletable reads: each job's sessions after its run, the delete's
      // answer and its sessions at the end of the GONE_S poll (held: gone(afterDelete)).
      observe("after", afterAll);
    });
  },
});
