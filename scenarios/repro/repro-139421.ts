// Upstream: PR openclaw/openclaw#139421 "fix(gateway): reconcile pairing lifecycle after token
// removal" (merged 2026-09-05; stage 2 of 3 of #135868). Regression target, source tree of
// early September.
//
// What it fixes (its description): "revoking a node token could leave connected clients
// authorized while worker cleanup was pending, or skip disconnection when that cleanup failed".
// User impact: "Revoked node connections cannot continue sending authorized work while cleanup
// waits."
//
// What the user should have seen (asserted here): once device.token.revoke of a node's token has
// answered, nothing that node's open connection sends is served any more, and the gateway closes
// that connection within CLOSE_S (R-139421-revoked-connection-ends). Observed: how many of the
// node's requests sent after the revoke answered were served, and whether and when the gateway
// closed the connection.
//
// How this lab gets there: an own lab with the scripted node (lab/clients/scripted-node.ts) and
// no node host. The scripted node pairs and keeps its connection open, sending a node.event every
// PACE_MS from before the revoke until the connection ends or CLOSE_S has passed; the operator
// revokes the node's token (device.token.revoke {deviceId, role: "node"}). The premise
// P-139421-token-revoked: the revocation took: a new connection of the node with its stored
// device token only is refused. `make repro NAME=repro-139421 N=1 AIM_OFF=1` revokes the token of
// another device (a second scripted node) instead: the premise must read unmet.
// Out of reach: the worker cleanup the fix reorders (the scripted node hosts no worker, so the
// cleanup has nothing to wait on): the race window here is the gateway's own revocation path.
//
// Outcome on 2026.9.6: not reproduced (runs 20261202-024639, -025043). The revocation is answered
// with revokedAtMs; the gateway answers none of the node's requests after it (in the second run,
// on a loaded machine, 50 node.event requests were left unanswered until the socket closed) and
// closes the node's connection 4001 "device removed" 17 ms and 137 ms after it; a new connection
// with the stored token is refused AUTH_DEVICE_TOKEN_MISMATCH. The same on 2026.9.4 and 2026.9.5
// (matrix-20261202-034151-fe4c). A fresh-clone make lab read FAIL once: the lab counted a request
// answered 2 ms after revokedAtMs but sent before it; only requests sent after the cut are judged
// now (run 20261202-051819: pass).
// The body drives and observes (ctx.observe); the premise and the check below judge what it observed.
import { defineScenario, labStep, type FindingRecord } from "../../lab/scenario.ts";
import { refusal, isRefused } from "../../lab/clients/operator.ts";
import { GatewayError } from "../../lab/clients/gateway.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { pairScripted } from "../../lab/kits/pairing.ts";
import { scene } from "../../lab/kits/scene.ts";
import { pollUntil, sleep } from "../../lab/core/wait.ts";
import { deadline } from "../../lab/core/pace.ts";

/** From the revoke's answer to the connection closed by the gateway. */
const CLOSE_S = 5;
/** One node.event this often on the node's connection. */
const PACE_MS = 20;

const EXPECTATION = `once device.token.revoke of a node's token has answered, no request the node's open connection sends is served, and the gateway closes that connection within ${CLOSE_S} s`;

const findings: FindingRecord[] = [];

/** The gateway's answer to a new connection with the stored device token only: its refusal, or "admitted". */
type Reconnect = { code: string; detailsCode: string | null } | "admitted";

/** The node's connection around the revocation, as observed where the check reads it. */
interface Revoke {
  /** When device.token.revoke answered (this machine's clock), and the revokedAtMs of its answer (the gateway's, if it gave one). */
  answeredAt: number;
  revokedAtMs?: unknown;
  /** Every node.event the node sent: when, and whether it was served (absent: not answered). */
  requests: { n: number; t: number; served?: boolean }[];
  /** The close of the node's connection, if it was closed (t: this machine's clock). */
  closed: { code: number; reason: string; t: number } | null;
}

export interface Observed {
  reconnect?: Reconnect;
  revoke?: Revoke;
}

/**
 * The cut is the gateway's own revocation time (revokedAtMs in its answer; the gateway's
 * container shares this machine's clock) when it gives one. A request sent at or after it
 * reached the gateway after the revocation, so serving it is the bug. One answered after the
 * cut but sent before it may have been served just before the revocation: its answer was on
 * the wire (a fresh-clone make lab counted one such, answered 2 ms after the cut, as served
 * after it); those are kept in the evidence, not judged.
 */
function afterRevoke(r: Revoke) {
  const cut = typeof r.revokedAtMs === "number" ? r.revokedAtMs : r.answeredAt;
  const after = r.requests.filter((x) => x.t >= cut);
  const servedAfter = after.filter((x) => x.served === true);
  const closedWithin = r.closed ? r.closed.t - r.answeredAt <= CLOSE_S * 1000 : false;
  return { cut, after, servedAfter, closedWithin };
}

export default defineScenario<Observed>({
  name: "repro-139421",
  upstream: {
    issue: 139421,
    kind: "pr",
    title: "fix(gateway): reconcile pairing lifecycle after token removal",
    status: "fixed",
    related: [135868],
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/pull/139421",
  },
  proves: "a node connection whose token is revoked is not served after the revocation answers, and is closed (openclaw/openclaw PR #139421)",
  topology: "own",
  pairing: "fresh",
  spec: { nodes: { count: 0 }, scripted: { count: 2 }, mcp: { servers: [] }, git: { enabled: false } },
  needs: [{ method: "device.token.revoke" }],
  findings,
  premises: [
    {
      id: "P-139421-token-revoked",
      what: "the node's token was revoked: a new connection of the node with its stored device token only is refused for its token (an AUTH_* details code)",
      aimOff: "the token of another device (scripted-2) is revoked instead",
      // Refused for its token (an AUTH_* details code), not for anything else: a connect that timed
      // out on a loaded machine (seen: TIMEOUT in an aimed-off run) says nothing of the token.
      judge: (h) => h.reconnect && { met: typeof h.reconnect === "object" && /^AUTH_/.test(h.reconnect.detailsCode ?? ""), observed: { reconnectWithStoredToken: h.reconnect } },
    },
  ],
  checks: [
    {
      id: "R-139421-revoked-connection-ends",
      expectation: EXPECTATION,
      judge: (h) => {
        if (!h.revoke) return undefined;
        const { servedAfter, closedWithin } = afterRevoke(h.revoke);
        return {
          holds: servedAfter.length === 0 && closedWithin,
          observed: normalise({ within_s: CLOSE_S, servedAfterRevoke: servedAfter.length, closedByGateway: h.revoke.closed ? h.revoke.closed.code : null, closedWithin }),
        };
      },
    },
  ],
  timeoutMs: 120_000,
  async run(ctx) {
    const { lab, log, observe, signal, aimOff } = ctx;
    const alias = "scripted-1";
    const node = lab.scripted(alias);
    await scene(ctx, { faults: false, evidence: { nodeId: node.nodeId, bounds: { CLOSE_S, PACE_MS } } }, async ({ evidence }) => {
      await labStep(`pairing ${alias}`, () => pairScripted(lab, alias, { signal }));
      const other = aimOff ? await labStep("pairing scripted-2", () => pairScripted(lab, "scripted-2", { signal })) : undefined;
      const a = node.current!;
      let closed: { code: number; reason: string; t: number } | undefined;
      a.onClose((code, reason) => (closed ??= { code, reason, t: Date.now() }));

      // ---- the node keeps sending; the operator revokes its token
      const sent: { n: number; t: number; answeredAt?: number; served?: boolean; code?: string; detailsCode?: string }[] = [];
      let stop = false;
      const loop = (async () => {
        for (let n = 0; !stop && !closed && a.connected; n++) {
          const r: (typeof sent)[number] = { n, t: Date.now() };
          sent.push(r);
          node.request("node.event", { event: "fleetlab.probe", payloadJSON: JSON.stringify({ n }) }, a).then(
            () => Object.assign(r, { answeredAt: Date.now(), served: true }),
            (e: unknown) => Object.assign(r, { answeredAt: Date.now(), served: false, code: refusal(e).code, detailsCode: refusal(e).detailsCode }),
          );
          await sleep(PACE_MS);
        }
      })();
      await sleep(500);
      const target = other?.nodeId ?? node.nodeId;
      const revoked = await lab.operator.client.request<Record<string, unknown>>("device.token.revoke", { deviceId: target, role: "node" }).catch(refusal);
      const revokedAt = Date.now();
      log(`device.token.revoke ${aimOff ? "(aimed off: scripted-2's token)" : ""}: ${JSON.stringify(revoked)}`);
      if (isRefused(revoked)) throw new Error(`device.token.revoke was refused (${revoked.code}: ${revoked.message})`);
      // expectation: CLOSE_S is the check's bound (closedWithin, within_s): wall time, not paced
      while (!closed && Date.now() - revokedAt < CLOSE_S * 1000 && !signal.aborted) await sleep(50);
      stop = true;
      await loop;
      // The last answers: every request answered (or a paced window of the lab's own has passed),
      // not a fixed 500 ms: a request served after the cut but answered late would otherwise be
      // left out of the count and the check pass on what it never saw.
      const answers = await pollUntil("the answers to every request sent", () => sent.filter((r) => r.answeredAt === undefined).length, (left) => left === 0, { deadlineMs: deadline(5_000), signal });
      if (answers.last) log(`${answers.last} request(s) still unanswered ${answers.ms} ms after the last was sent`);
      evidence.unanswered = answers.last;

      // ---- the premise: the token no longer admits a connection
      const again = await node.connect(lab.scriptedUrl(alias), { deviceToken: "only" }).then(
        () => undefined,
        (e: unknown) => (e instanceof GatewayError ? { code: e.code, detailsCode: e.detailsCode ?? null } : Promise.reject(e)),
      );
      // What P-139421-token-revoked reads.
      observe("reconnect", again ?? "admitted");

      // What R-139421-revoked-connection-ends reads: every request with when it was sent and
      // whether it was served, the revocation's times, the connection's close as it stands now.
      const seen: Revoke = { answeredAt: revokedAt, revokedAtMs: revoked.revokedAtMs, requests: sent.map((r) => ({ n: r.n, t: r.t, served: r.served })), closed: closed ?? null };
      observe("revoke", seen);
      const { cut, after, servedAfter } = afterRevoke(seen);
      log(`requests: ${sent.length} sent, ${after.length} sent after the revocation (${revoked.revokedAtMs === undefined ? "its answer" : "revokedAtMs"}), ${servedAfter.length} of them served, ${sent.filter((r) => r.t < cut && (r.answeredAt ?? 0) >= cut && r.served).length} sent before it and answered served after it; connection closed: ${closed ? `${closed.code} ${closed.t - revokedAt} ms after` : "no"}`);
      evidence.revoke = { answer: revoked, target, aimedOff: aimOff };
      evidence.requests = sent;
      evidence.closed = closed ?? null;
      evidence.reconnect = again ?? "admitted";
    });
  },
});
