// Upstream: openclaw/openclaw#148693 "Android stays Connected while node events repeatedly fail
// with PAIRING_CHANGED (2026.9.4)" (open). Reported on 2026.9.4.
//
// Reporter's steps (from the thread): an Android node stays connected; its node.event requests
// are refused again and again with PAIRING_CHANGED (39 refusals in one connection window of
// about 24 minutes) while the app and presence still show it Connected. The maintainer's reading:
// "The PAIRING_CHANGED rejection comes from the pre-dispatch pairing fence in server-methods.ts
// (authorizeGatewayRequestPreDispatch), which replies retryable:true but leaves the socket open
// and the node session READY, so nothing ever tells the client to reconnect, and every
// node.event keeps hitting the same fence. Plan: repro the fence trip with a synthetic node
// connection."
//
// What the user should have seen (asserted here), as the fix describes it: a node connection
// whose pairing state is no longer current is retired by the gateway (closed, 4001 in the fix),
// so the node's documented reconnect can run, instead of staying open with every request
// refused. Bound: within RETIRE_S of the pairing state moving away from connection A, A is closed
// by the gateway (a close frame from it, any code: the signature keeps the code). Anything else
// does not hold and carries its own signature: open and refused PAIRING_CHANGED (the registered
// one), refused with another code, still served, or stuck with answers that never come (each
// node.event waits ANSWER_S at the machine's pace; a time-out is an answer "TIMEOUT"). A close
// without a close frame (1006: the gateway's side or the lab's tap, which the lab cannot tell
// apart) and no answer with no close are the lab's unknown (R-148693-stale-connection-retired).
//
// Fix: PR openclaw/openclaw#148770 "fix(gateway): retire node connection when pairing changed
// before dispatch" (open when this was written): settles the captured pairing lease before
// answering, flips presence and closes the socket (4001). No released version carries it.
//
// How this lab reproduces it (the synthetic node connection the thread plans): an own lab with
// the scripted node (lab/clients/scripted-node.ts) and no node host. The scripted node pairs as
// an operator pairs a node and keeps connection A open; a node.event on A is answered (the
// baseline). Then a second connection B with the same device identity is admitted: the gateway
// now holds B as the node's session, so A's pairing state is no longer current
// (P-148693-second-connection). A sends a node.event every second for RETIRE_S; each answer, and
// whether and how the gateway closes A, is kept (on the scripted node's transcript and its tap).
// `make repro NAME=repro-148693 N=1 AIM_OFF=1` opens no second connection: the premise is unmet
// and the verdict must be unknown.
//
// Outcome on 2026.9.6: reproduced (run 20261202-000732-01b1). Pairing took 150 ms; the baseline
// node.event was served (handled false, "unsupported_event": the gateway answers an event it does
// not know); the second connection was admitted; then every node.event on A, one a second for
// 10 s, was refused UNAVAILABLE "node pairing changed before request dispatch" (details
// PAIRING_CHANGED, retryable: true), and the gateway never closed A: the report's loop. The same
// on 2026.9.4 and 2026.9.5 (matrix-20261202-020542-d80d), and in 4 of 4 soak rounds on 2026.9.6.
// With the check asking for the close alone: the same, known (run 20261204-031824-65f9ddc78791c549).
// The body drives and observes (ctx.observe); the premise and the check below judge what it observed.
import { LabInfraError, defineScenario, labStep, type FindingRecord } from "../../lab/scenario.ts";
import { refusal, isRefused, type Refused } from "../../lab/clients/operator.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { pairScripted } from "../../lab/kits/pairing.ts";
import { scene } from "../../lab/kits/scene.ts";
import { sleep } from "../../lab/core/wait.ts";

/** From B's admission: how long A is watched (a node.event a second). */
const RETIRE_S = 10;
/** How long one node.event on A waits for its answer (the lab's own wait, paced): past it, the answer reads TIMEOUT. */
const ANSWER_S = 5;

const EXPECTATION = `once a second connection with the same device identity is admitted, the first connection (whose pairing state is no longer current) is retired: closed by the gateway within ${RETIRE_S} s, so the node's reconnect can run; left open (its requests refused with any code, served, or unanswered) does not hold`;

const findings: FindingRecord[] = [
  {
    // Reproduced on 2026.9.6 (run 20261202-000732-01b1): after the second connection was
    // admitted, all 10 node.event requests on connection A were refused UNAVAILABLE
    // "node pairing changed before request dispatch" (details PAIRING_CHANGED, retryable) and the
    // gateway never closed A. The same on 2026.9.4 and 2026.9.5 (matrix-20261202-020542-d80d).
    id: "R-148693-stale-connection-retired",
    expectation: EXPECTATION,
    signature: { within_s: RETIRE_S, aClosedByGateway: null, answers: ["UNAVAILABLE/PAIRING_CHANGED retryable"] },
    versions: ["2026.9.6", "2026.9.5", "2026.9.4"],
    kind: "shortfall",
    evidence: "fixtures/findings/R-148693-stale-connection-retired.json",
  },
];

/** Connection A's close as its client saw it (afterMs: from B's admission; -1 before it). */
type Closed = { code: number; reason: string; afterMs: number };

/** One node.event on A: served with its answer, or refused (a time-out is a refusal "TIMEOUT") with its retryable flag. */
type Answer = { n: number; ok: true; answer: unknown } | ({ n: number; retryable: boolean | null } & Refused);

export interface Observed {
  /** The second connection: admitted or not, and A's close (null: open) when it was. */
  second?: { admitted: boolean; aClosed: Closed | null };
  /** A, watched for RETIRE_S: its close as it stood when the watch ended (null: open), and every answer. */
  watch?: { closed: Closed | null; answers: Answer[] };
}

/** An answer as the signature names it: "served", or its code/details code, and " retryable" when it says so. */
const answerLabel = (x: Answer): string => (isRefused(x) ? `${x.code}/${x.detailsCode ?? "-"}${x.retryable === true ? " retryable" : ""}` : "served");

export default defineScenario<Observed>({
  name: "repro-148693",
  upstream: {
    issue: 148693,
    title: "[Bug]: Android stays Connected while node events repeatedly fail with PAIRING_CHANGED (2026.9.4)",
    status: "open",
    fixPr: 148770,
    fixPrState: "open",
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/148693",
  },
  protocolSteps: [
    "Connection A: connect as a node with device identity D, get it paired and approved; a `node.event` on A is answered.",
    "Open connection B with the same device identity D and `connect` again: admitted, B is now the node's session.",
    "On A, send `{\"type\":\"req\",\"method\":\"node.event\",...}` once a second for 10 s.",
    "Every one is answered `UNAVAILABLE` \"node pairing changed before request dispatch\" (details `PAIRING_CHANGED`, `retryable: true`) and the gateway never closes A (expected: A closed by the gateway, 4001 in fix PR #148770, so the node's reconnect can run).",
  ],
  proves: "a node connection whose pairing state is no longer current (a second connection of the same device was admitted) is retired (closed) by the gateway, not left open with every request refused PAIRING_CHANGED (openclaw/openclaw#148693)",
  topology: "own",
  pairing: "fresh",
  spec: { nodes: { count: 0 }, scripted: { count: 1 }, mcp: { servers: [] }, git: { enabled: false } },
  findings,
  premises: [
    {
      id: "P-148693-second-connection",
      what: "while connection A was open and served, a second connection B with the same device identity was admitted (hello-ok)",
      aimOff: "no second connection is opened",
      judge: (h) => h.second && { met: h.second.admitted && !h.second.aClosed, observed: { secondAdmitted: h.second.admitted, aOpenWhenAdmitted: !h.second.aClosed } },
    },
  ],
  checks: [
    {
      id: "R-148693-stale-connection-retired",
      expectation: EXPECTATION,
      judge: (h) => {
        if (!h.watch) return undefined;
        const closedInWatch = h.watch.closed;
        // Who closed A: the lab's own tick watchdog closes 4000 "tick timeout" (the gateway went
        // silent: not a retirement). (1006, and no answer with no close, are the lab's unknown: the body ends there.)
        const byLab = closedInWatch?.code === 4000 && closedInWatch.reason === "tick timeout";
        const closedByGateway = closedInWatch && !byLab ? closedInWatch : undefined;
        // What the fix promises and nothing else: A retired (closed by the gateway) within the
        // watch. Served, refused with any code, or unanswered while open: each its own signature.
        return {
          holds: closedByGateway !== undefined,
          observed: normalise({
            within_s: RETIRE_S,
            aClosedByGateway: closedByGateway ? closedByGateway.code : null,
            answers: [...new Set(h.watch.answers.map(answerLabel))],
          }),
        };
      },
    },
  ],
  timeoutMs: 120_000,
  async run(ctx) {
    const { lab, log, observe, signal, aimOff } = ctx;
    const alias = "scripted-1";
    const node = lab.scripted(alias);
    await scene(ctx, { faults: false, evidence: { nodeId: node.nodeId, bounds: { RETIRE_S } } }, async ({ evidence }) => {
      const paired = await labStep(`pairing ${alias}`, () => pairScripted(lab, alias, { signal }));
      const a = node.current!;
      let aClosed: Closed | undefined;
      let bAdmittedAt = 0;
      a.onClose((code, reason) => (aClosed ??= { code, reason, afterMs: bAdmittedAt ? Date.now() - bAdmittedAt : -1 }));
      // On A itself (not the newest connection), each answer awaited ANSWER_S at the pace: a gateway
      // that stops answering reads TIMEOUT, its own signature, instead of holding the watch open.
      const event = (n: number): Promise<Answer> =>
        a.request("node.event", { event: "fleetlab.probe", payloadJSON: JSON.stringify({ n }) }, { timeoutMs: ANSWER_S * 1000 }).then(
          (r) => ({ n, ok: true as const, answer: r }),
          (e: unknown) => ({ n, ...refusal(e), retryable: (e as { retryable?: boolean }).retryable ?? null }),
        );
      const baseline = await event(0);
      log(`${alias} paired (${paired.ms} ms); baseline node.event on A: ${JSON.stringify(baseline)}`);
      if (isRefused(baseline)) throw new Error(`the paired node's first node.event was refused (${baseline.code}: ${baseline.message}): the state the report starts from was not reached`);

      // ---- a second connection with the same identity
      let b: { ok: boolean; connId?: string; error?: string } = { ok: false };
      if (!aimOff) {
        b = await node.connect(lab.scriptedUrl(alias)).then(
          ({ hello }) => ({ ok: true, connId: hello.server.connId }),
          (e: Error) => ({ ok: false, error: e.message }),
        );
      }
      bAdmittedAt = Date.now();
      // What P-148693-second-connection reads.
      observe("second", { admitted: b.ok, aClosed: aClosed ?? null });
      log(`second connection with the same identity: ${JSON.stringify(b)}`);

      // ---- A, watched for RETIRE_S: a node.event a second, the answers collected as they come
      const pending: Promise<Answer>[] = [];
      for (let n = 1; n <= RETIRE_S && !aClosed && !signal.aborted; n++) {
        if (a.connected) pending.push(event(n));
        await sleep(1_000);
      }
      // What the expectation judges: the close as it stood when the RETIRE_S watch ended.
      const closedInWatch = aClosed;
      const answers = await Promise.all(pending);
      const fenced = answers.filter((x) => isRefused(x) && (x as { detailsCode?: string }).detailsCode === "PAIRING_CHANGED");
      const served = answers.filter((x) => !isRefused(x));
      log(`A after B: ${answers.length} node.event(s): ${fenced.length} refused PAIRING_CHANGED, ${served.length} served; A closed: ${JSON.stringify(aClosed ?? null)}`);
      // 1006 is a socket cut without a close frame, by the gateway or by the lab's tap: the lab
      // cannot tell which.
      if (closedInWatch?.code === 1006) throw new LabInfraError(`connection A was cut without a close frame (1006) ${closedInWatch.afterMs} ms after B's admission: the gateway or the lab's tap, the lab cannot tell which`);
      // Nothing seen on A (no answer and no close): the lab saw nothing to judge.
      if (!closedInWatch && answers.length === 0) throw new LabInfraError("connection A gave no answer and was not closed within the watch: nothing observed to judge");
      // What R-148693-stale-connection-retired reads.
      observe("watch", { closed: closedInWatch ?? null, answers });
      evidence.baseline = baseline;
      evidence.second = b;
      evidence.answers = answers;
      evidence.aClosed = aClosed ?? null;
    });
  },
});
