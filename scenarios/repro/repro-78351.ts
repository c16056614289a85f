// repro-78351: openclaw PR #78351 "[Fix] Preserve node reconnect state" (merged 2026-05-06; the
// same race as PR #79491 "fix(gateway): keep newer node session on stale disconnect", which refs
// the locked issue #30137: Android looks connected while node commands fail "node not
// connected" after a reconnect).
//
// Reported on: the 2026.5 line (source of early May); checked here on the pinned 2026.9.x.
//
// Steps (the PR's own): a node is connected (connection A) and an operator's node.invoke is
// pending on A; the node connects again with the same node id (connection B) while A is still
// open; then A closes.
//
// Symptom before the fix: the stale close of A unregistered the node's NEW session (B) and wrote
// "disconnected" presence: node.list showed the node disconnected and node.invoke failed "node
// not connected" although B was open and serving. What the PR says the user should see: B stays
// registered and connected in node.list, an invoke reaches B and is answered, and the invoke
// that was pending on A is rejected when A closes (not left to its timeout).
//
// What it asserts (each a bug check):
// - R-78351-new-session-kept: node.list shows the node connected at every read for 5 s after A's
//   close (and at the end of those 5 s);
// - R-78351-new-session-serves: after A's close, an operator's node.invoke of system.which reaches
//   B (on B's connection, as the node saw it) and its answer reaches the operator unchanged;
// - R-78351-stale-invoke-ends: the invoke pending on A ends for the operator with an error within
//   5 s of A's close (its own timeout is 30 s).
//
// How this lab reproduces it: the scripted node (the lab's node client, through its own tap)
// pairs as an operator pairs a node, withholds system.which, opens a second connection with its
// own identity while the first is open, then cuts the first socket (1006, no close frame: what a
// phone's dropped network leaves). No node host, no git server, no MCP server.
//
// Premises:
// - P-78351-invoke-pending-on-a: the first invoke reached the node on connection A, was withheld,
//   and the operator still had no answer when B's connect was sent. Aimed off: the node answers it at
//   once, so nothing is pending on A;
// - P-78351-second-connection: B's connect was admitted (hello-ok) while A was still open.
//   Aimed off: A is cut BEFORE B connects, so nothing is concurrent. The self-test, each premise
//   on its own: `make repro NAME=repro-78351 N=1 AIM_OFF=1` must print "caught the miss 2/2".
//
// Bounds not paced (expectations, wall time): the 5 s after A's close for both the invoke's end
// and the node.list watch.
import { defineScenario, LabInfraError, labStep, type FindingRecord } from "../../lab/scenario.ts";
import { scene } from "../../lab/kits/scene.ts";
import { pairScripted } from "../../lab/kits/pairing.ts";
import { refusal } from "../../lab/kits/session.ts";
import { listNodes } from "../../lab/clients/operator.ts";
import { pollUntil } from "../../lab/core/wait.ts";
import { normalise } from "../../lab/findings/normalise.ts";

const ALIAS = "scripted-1";
const COMMAND = "system.which";
const INVOKE_TIMEOUT_MS = 30_000;
const BOUND_S = 5;

const findings: FindingRecord[] = [];

type InvokeEnd = { ok: true; payload: unknown } | { ok: false; code: string; detailsCode?: string; message: string };

/** What the body observed (JSON, for the history); the premises and the checks below judge it. Clock values are epoch ms. */
export interface Observed {
  /**
   * The first invoke as the node saw it (the connection it came on, withheld or answered),
   * connection A's name, the operator's answer to it so far (null: none yet), when B's connect
   * was sent and when B was admitted.
   */
  invokeA?: { conn: string; outcome: string; connA: string; operatorAnswer: { ok: boolean; at: number } | null; connectSentAt: number; bAdmittedAt: number };
  /** Whether A was open just before B's connect and once B was admitted, and whether B was connected then. */
  connections?: { aOpenBefore: boolean; aOpenAtB: boolean; bConnected: boolean };
  /** node.list for BOUND_S after A's close: whether a read showed the node not connected, the last read (connected null: not listed), and whether B was open then. */
  nodeList?: { disconnectedSeen: boolean; last: { ms: number; connected: boolean | null }; bOpen: boolean };
  /** The second invoke: the operator's result, the connections the node saw it on, B's name and the answer B gave. */
  secondInvoke?: { result: InvokeEnd; reachedOn: string[]; connB: string; answer: unknown };
  /** The first invoke: whether it ended for the operator within BOUND_S of A's close, and how it ended (null: never). */
  firstInvoke?: { endedWithin: boolean; end: InvokeEnd | null };
}

/** The payload a node.invoke answer carries (payload, or payloadJSON parsed). */
function invokePayload(r: InvokeEnd): unknown {
  const payload = r.ok ? (r.payload as { payload?: unknown; payloadJSON?: unknown }) : undefined;
  return payload ? (payload.payload ?? (typeof payload.payloadJSON === "string" ? (JSON.parse(payload.payloadJSON) as unknown) : undefined)) : undefined;
}

export default defineScenario<Observed>({
  name: "repro-78351",
  upstream: {
    issue: 78351,
    kind: "pr",
    title: "[Fix] Preserve node reconnect state",
    status: "fixed",
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/pull/78351",
  },
  proves: "openclaw PR #78351: a node's stale connection closing after it reconnected leaves the new connection registered, connected and serving, and ends the invoke pending on the old one",
  topology: "own",
  spec: { nodes: { count: 0 }, git: { enabled: false }, mcp: { servers: [] }, scripted: { count: 1 } },
  needs: [{ method: "node.invoke" }],
  bug: ["R-78351-new-session-kept", "R-78351-new-session-serves", "R-78351-stale-invoke-ends"],
  premises: [
    {
      id: "P-78351-invoke-pending-on-a",
      what: "the first invoke reached the node on connection A, was withheld, and the operator had no answer yet when B's connect was sent (the gateway may end it as it admits B)",
      aimOff: "the node answers the first invoke at once instead of withholding it",
      judge: (h) => {
        const a = h.invokeA;
        if (!a) return undefined;
        const first = a.operatorAnswer;
        return {
          met: a.conn === a.connA && a.outcome === "withheld" && (first === null || first.at > a.connectSentAt),
          observed: { invokeConn: a.conn, connA: a.connA, outcome: a.outcome, operatorAnswered: first !== null ? { ok: first.ok, atMsAfterConnectSent: first.at - a.connectSentAt, atMsAfterB: first.at - a.bAdmittedAt } : null },
        };
      },
    },
    {
      id: "P-78351-second-connection",
      what: "a second connection (B) with the node's own identity was admitted while A was still open",
      aimOff: "A is cut before B connects",
      judge: (h) => {
        const c = h.connections;
        if (!c) return undefined;
        return { met: c.aOpenBefore && c.aOpenAtB && c.bConnected, observed: { aOpenBefore: c.aOpenBefore, aOpenAtB: c.aOpenAtB, bConnected: c.bConnected } };
      },
    },
  ],
  checks: [
    {
      id: "R-78351-new-session-kept",
      expectation: `node.list shows the node connected at every read for ${BOUND_S} s after its stale connection A closes, while its new connection B is open`,
      judge: (h) => {
        const n = h.nodeList;
        if (!n) return undefined;
        return {
          holds: !n.disconnectedSeen && n.bOpen,
          observed: normalise({ within_s: BOUND_S, listedDisconnected: n.disconnectedSeen, listed: n.last.connected === null ? "absent" : n.last.connected ? "connected" : "disconnected", bOpen: n.bOpen }),
        };
      },
    },
    {
      id: "R-78351-new-session-serves",
      expectation: "after the stale connection A closes, an operator's node.invoke reaches the node on its new connection B and B's answer reaches the operator unchanged",
      judge: (h) => {
        const i = h.secondInvoke;
        if (!i) return undefined;
        const second = i.result;
        const reachedB = i.reachedOn.includes(i.connB);
        const unchanged = JSON.stringify(invokePayload(second)) === JSON.stringify(i.answer);
        return {
          holds: second.ok && reachedB && unchanged,
          observed: normalise(second.ok ? { ok: true, reachedB, unchanged } : { ok: false, code: second.code, detailsCode: second.detailsCode, message: second.message, reachedB }),
        };
      },
    },
    {
      // Judged last: what the operator's first invoke did (its end is in the evidence).
      id: "R-78351-stale-invoke-ends",
      expectation: `the invoke pending on the stale connection A ends for the operator with an error within ${BOUND_S} s of A's close (its own timeout is ${INVOKE_TIMEOUT_MS / 1000} s)`,
      judge: (h) => {
        const f = h.firstInvoke;
        if (!f) return undefined;
        const end = f.end;
        return {
          holds: f.endedWithin && end !== null && !end.ok,
          observed: normalise({ within_s: BOUND_S, endedWithin: f.endedWithin, end: end ? (end.ok ? "ok" : { code: end.code, message: end.message }) : "never" }),
        };
      },
    },
  ],
  findings,
  timeoutMs: 240_000,
  async run(ctx) {
    const { lab, observe, log, signal } = ctx;
    await scene(ctx, { faults: false }, async ({ evidence }) => {
      const node = lab.scripted(ALIAS);
      const url = lab.scriptedUrl(ALIAS);
      const paired = await labStep(`pairing ${ALIAS}`, () => pairScripted(lab, ALIAS, { signal }));
      evidence.pairing = paired.steps;
      const connA = node.current;
      if (!connA) throw new LabInfraError(`${ALIAS}: the lab's scripted node has no open connection after pairing: the state the fix starts from was not reached`);
      log(`paired ${ALIAS} as ${paired.nodeId}; connection A is ${connA.name}`);

      // 1. An invoke pending on A: the node withholds system.which.
      node.answerWith(COMMAND, ctx.aimOff === "P-78351-invoke-pending-on-a" ? { ok: true, payload: { fleetlab: "aimed off: answered at once" } } : "withhold");
      let first: (InvokeEnd & { at: number }) | undefined;
      const firstDone = lab.operator.client
        .request<Record<string, unknown>>("node.invoke", { nodeId: paired.nodeId, command: COMMAND, params: { bins: ["sh"] }, idempotencyKey: crypto.randomUUID(), timeoutMs: INVOKE_TIMEOUT_MS }, { timeoutMs: INVOKE_TIMEOUT_MS + 30_000 })
        .then(
          (payload) => void (first = { ok: true, payload, at: Date.now() }),
          (err: unknown) => void (first = { ...refusal(err), at: Date.now() }),
        );
      const invA = await labStep("the first invoke reaching the node", () => node.waitInvoke((i) => i.command === COMMAND, { timeoutMs: 20_000, signal }));
      log(`invoke ${invA.id} reached ${ALIAS} on ${invA.conn} (withheld)`);

      // 2. The second connection (B) while A is open; aimed off: A is cut first.
      const aCutFirst = ctx.aimOff === "P-78351-second-connection";
      if (aCutFirst) {
        await node.disconnect(1006, "aimed off: A cut before B", connA);
        log("aim-off: connection A cut before B connects");
      }
      const aOpenBefore = connA.connected;
      // When B's connect leaves the lab: the invoke must still be pending on A then. The gateway
      // may end it as it admits B (seen: its error reached the operator 3-36 ms before B's
      // hello-ok did, matrix-20261204-033256-f4c9, all three versions): that is the stale invoke
      // ending, judged below, not a state the lab failed to reach.
      const tConnect = Date.now();
      const { client: connB, hello } = await labStep("the second connection with the node's identity", () => node.connect(url));
      const aOpenAtB = connA.connected;
      const tB = Date.now();
      log(`connection B (${connB.name}) admitted (hello-ok, protocol ${String((hello as { protocol?: unknown }).protocol ?? "?")}); A open: ${aOpenAtB}`);
      // P-78351-invoke-pending-on-a and P-78351-second-connection judge these.
      observe("invokeA", { conn: invA.conn, outcome: invA.outcome, connA: connA.name, operatorAnswer: first !== undefined ? { ok: first.ok, at: first.at } : null, connectSentAt: tConnect, bAdmittedAt: tB });
      observe("connections", { aOpenBefore, aOpenAtB, bConnected: connB.connected });

      // 3. A's socket is cut (no close frame), unless the aim-off already did.
      const tClose = Date.now();
      if (!aCutFirst) {
        await node.disconnect(1006, "stale connection A cut", connA);
        log(`connection A (${connA.name}) cut ${tClose - tB} ms after B was admitted`);
      }

      // R-78351-stale-invoke-ends: the operator's invoke on A ends within 5 s of the close.
      const ended = await pollUntil("the invoke pending on A ending for the operator", () => first, (v) => v !== undefined, {
        deadlineMs: BOUND_S * 1000, // expectation: the PR rejects A's pending invokes when A closes
        from: tClose,
        intervalMs: 100,
        signal,
      });
      // Then let it end however it does (its own timeout at the latest), for the record.
      await labStep("the first invoke ending (its own 30 s timeout at the latest)", () => firstDone);
      const firstEnd = first as (InvokeEnd & { at: number }) | undefined;
      log(`first invoke ended ${firstEnd ? `${firstEnd.ok ? "ok" : `${firstEnd.code}: ${firstEnd.message}`} ${firstEnd.at - tClose} ms after A's close (negative: before it)` : "never"}`);
      evidence.firstInvoke = firstEnd ? { ...firstEnd, msAfterClose: firstEnd.at - tClose, msAfterB: firstEnd.at - tB } : null;

      // R-78351-new-session-kept: node.list shows the node connected at every read for 5 s.
      const readings: { ms: number; connected: boolean | null }[] = [];
      const lost = await pollUntil(
        "node.list showing the node disconnected after A's close",
        async () => {
          const n = (await listNodes(lab.operator.client)).find((x) => x.nodeId === paired.nodeId);
          const r = { ms: Date.now() - tClose, connected: n ? n.connected === true : null };
          readings.push(r);
          return r;
        },
        (r) => r.connected !== true,
        { deadlineMs: BOUND_S * 1000, from: tClose, intervalMs: 250, signal }, // expectation: 5 s after A's close
      );
      evidence.nodeListAfterClose = readings;
      log(`node.list after A's close: ${readings.length} reads, ${lost.held ? `disconnected at +${lost.last.ms} ms` : "connected at every read"}; B open: ${connB.connected}`);
      observe("nodeList", { disconnectedSeen: lost.held, last: lost.last, bOpen: connB.connected }); // R-78351-new-session-kept

      // R-78351-new-session-serves: a new invoke reaches B and its answer reaches the operator.
      const answer = { found: { sh: "/bin/sh" }, from: "connection B" };
      node.answerWith(COMMAND, { ok: true, payload: answer });
      const second = await lab.operator.client
        .request<Record<string, unknown>>("node.invoke", { nodeId: paired.nodeId, command: COMMAND, params: { bins: ["sh"] }, idempotencyKey: crypto.randomUUID(), timeoutMs: 10_000 }, { timeoutMs: 20_000 })
        .then((r): InvokeEnd => ({ ok: true, payload: r }), (err: unknown): InvokeEnd => refusal(err));
      const invB = node.invokes().filter((i) => i.command === COMMAND && i.id !== invA.id);
      log(`second invoke: ${second.ok ? "ok" : `${second.code}: ${second.message}`}; reached ${invB.map((i) => i.conn).join(", ") || "no connection"}`);
      evidence.secondInvoke = { result: second, reachedOn: invB.map((i) => i.conn) };
      observe("secondInvoke", { result: second, reachedOn: invB.map((i) => i.conn), connB: connB.name, answer }); // R-78351-new-session-serves

      // Judged last: what the operator's first invoke did (its end is in the evidence above).
      observe("firstInvoke", { endedWithin: ended.held, end: firstEnd ?? null }); // R-78351-stale-invoke-ends
    });
  },
});
