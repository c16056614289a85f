// Upstream: openclaw/openclaw#116363 "Node invoke results can lose to immediate socket close"
// (closed; opened 2026-07-30 by steipete).
// Reported on: source commit 4edc0e9d9ecba5b453716d1ccbda66131f695166 (between 2026.7.x
// releases; no release named).
// Reporter's steps: pair and connect a node; start a node.invoke with an observable successful
// result; have the node send its valid final node.invoke.result frame and close the socket at
// once. Symptom: the operator's invoke is rejected "node disconnected" (the fix PR quotes
// `DISCONNECTED: node disconnected (camera.list)`), and the result frame the gateway had
// already admitted later fails with PAIRING_CHANGED; with the socket left open the same invoke
// resolves with its payload. A retry can repeat the side effect.
// What the user should see (what this scenario asserts): a result frame that reached the
// gateway before the close is authoritative: node.invoke resolves ok with the node's payload,
// not DISCONNECTED (R-116363-result-wins); and the node then reconnects as the same node (same
// nodeId, approved, no pairing request, bundle untouched) within 60 s (R-116363-same-node).
// Fix: PR #119246 "fix(gateway): drain admitted node results before disconnect" (merged; "Closes
// #116363"): the close handler drains admitted node.invoke.result/progress dispatches (up to
// 1 s, NODE_LIFECYCLE_DISPATCH_DRAIN_TIMEOUT_MS) before it unregisters the node. First release
// carrying it: not pinned; it is absent from 2026.9.6's changelog range, so <= 2026.9.5
// (likely <= 2026.8.1). 2026.9.6's dist has the drain (ws-connection-*.mjs).
// Outcome: not reproduced on 2026.9.6 (runs 20261130-122756-38c7, 20261130-124146-f1b8, pass):
// the invoke resolved ok with the payload (22 ms and 736 ms after it was sent), although the
// tap closed the connection right behind the result frame (fault event after: true); the
// gateway wrote no reply to that frame and logged no drain time-out; the node reconnected as
// the same node ~1 s later.
// How this lab reproduces it (shared lab; members: gateway, node-1, tap-node-1):
//   - the lab puts an empty file named fleetlab-<hex> in /usr/local/bin on node-1 (on the node
//     host's PATH), so the node's system.which answer names it: the result frame is this
//     invoke's and no other (removed again at the end);
//   - fault: faults.wire.close 1006 with after: true on tap-node-1, matching the node->gw
//     node.invoke.result whose text holds that name, once: the tap forwards the node's result
//     frame to the gateway and closes behind it (FIN to the gateway, the node's socket
//     aborted), which is "send the final result and immediately close" as the gateway sees it;
//   - trigger: the operator's node.invoke system.which {bins: [<name>]} to node-1.
//   The proof sits where it happens: the tap's fault event (after: true) and the trigger frame,
//   the operator's RPC result, node.list / pairing lists, the gateway's log (drain time-out).
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): INVOKE_BOUND_S (the
// operator's node.invoke) and RECONNECT_BOUND_S.
// The body drives and observes (ctx.observe); the checks below judge what it observed.
import { memberLogLines } from "../../lab/kits/logs.ts";
import crypto from "node:crypto";
import { faults } from "../../lab/faults/index.ts";
import { defineScenario, LabInfraError, type CheckDef, type FindingRecord, labStep } from "../../lab/scenario.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { docker } from "../../lab/engine/docker.ts";
import { controlConn, controlEvents, waitReconnect } from "../../lab/kits/node-wire.ts";
import { nodeView, sameNode, waitConnected, waitForWorkerHost, type NodeView } from "../../lab/kits/nodes.ts";
import { refusal, type Refused } from "../../lab/kits/session.ts";
import { nodeScene } from "../../lab/kits/scene.ts";
import { uniqueName } from "../../lab/kits/workers.ts";
import type { Lab } from "../../lab/topology/lab.ts";

/** How long the operator's node.invoke may take (its own timeoutMs is 15 s). */
const INVOKE_BOUND_S = 25;
/** How long after the close the node must be connected again as the same node. */
const RECONNECT_BOUND_S = 60;

// Not reproduced on 2026.9.6 so far: no finding registered.
const findings: FindingRecord[] = [];

/** The operator's node.invoke as it ended: ok with the gateway's answer, or its refusal; ms after it was sent. */
type InvokeEnd = { ok: true; payload: { ok?: boolean; payload?: { bins?: Record<string, string> } }; ms: number } | (Refused & { ms: number });

export interface Observed {
  /** The operator's node.invoke system.which of the name only this invoke's result carries (bin, at binPath on the node), as it ended. */
  invoke?: { bin: string; binPath: string; result: InvokeEnd };
  /** The node's control connection before the close, the one it came back on within the bound (null: none), and the node before and after. */
  reconnect?: { conn: string; back: { conn: string; seq: number } | null; before: NodeView; after: NodeView };
}

const checks: CheckDef<Observed>[] = [
  {
    id: "R-116363-result-wins",
    expectation: `a node.invoke whose result frame reached the gateway before the node's socket closed resolves ok with that payload (not DISCONNECTED), within ${INVOKE_BOUND_S} s`,
    judge: (h) => {
      if (!h.invoke) return undefined;
      const { bin, binPath, result: r } = h.invoke;
      const found = r.ok ? Object.keys(r.payload.payload?.bins ?? {}) : [];
      const okWithPayload = r.ok && r.payload.ok === true && r.payload.payload?.bins?.[bin] === binPath;
      return {
        holds: okWithPayload,
        observed: normalise(
          r.ok ? { within_s: INVOKE_BOUND_S, ok: true, found, pathMatches: okWithPayload } : { within_s: INVOKE_BOUND_S, ok: false, code: r.code, detailsCode: r.detailsCode ?? null, message: r.message },
        ),
      };
    },
  },
  {
    id: "R-116363-same-node",
    expectation: `after the close the node reconnects within ${RECONNECT_BOUND_S} s as the same node (same nodeId, approved, no pairing request, bundle untouched)`,
    judge: (h) => {
      if (!h.reconnect) return undefined;
      const { conn, back, before, after } = h.reconnect;
      const same = sameNode(before, after);
      return {
        holds: !!back && same.holds && back.conn !== conn,
        observed: normalise({ within_s: RECONNECT_BOUND_S, reconnected: !!back, newConnection: !!back && back.conn !== conn, ...same.observed }),
      };
    },
  },
];

export default defineScenario<Observed>({
  name: "repro-116363",
  upstream: {
    issue: 116363,
    title: "Node invoke results can lose to immediate socket close",
    status: "fixed",
    fixPr: 119246,
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/116363",
  },
  proves: "openclaw#116363: a node.invoke.result the gateway received just before the node's socket closed still resolves the operator's invoke with its payload (not DISCONNECTED), and the node reconnects as the same node",
  topology: "shared",
  needs: [{ method: "node.invoke", why: "the operator invokes system.which on the node" }],
  findings,
  checks,
  timeoutMs: 300_000,
  async run(ctx) {
    const { lab, log, observe, signal } = ctx;
    await nodeScene(ctx, {}, async ({ alias, tap, evidence, tl }) => {
      await waitConnected(lab, alias, true, { timeoutMs: 60_000, signal });
      const before = await nodeView(lab, alias);
      evidence.before = before;

      // A name only this invoke's result carries: an empty file on the node's PATH.
      const bin = uniqueName("fleetlab");
      const binPath = `/usr/local/bin/${bin}`;
      await labStep(`creating ${binPath} on ${alias}`, async () => {
        const r = await lab.exec(alias, ["sh", "-c", `: > '${binPath}' && chmod 755 '${binPath}'`], { user: "root" });
        if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}: ${(r.stderr || r.stdout).trim()}`);
      });
      const undoBin = lab.teardown.defer(`remove ${binPath} on ${alias}`, () => lab.exec(alias, ["rm", "-f", binPath], { user: "root" }));

      const since = await tap.seq();
      const conn = await controlConn(tap);
      const cut = faults.wire.close({ lab, node: alias }, 1006, {
        match: { path: "/", dir: "node->gw", method: "node.invoke.result", textIncludes: bin },
        after: true,
        once: true,
        timeline: tl,
        label: `${alias}: forward its system.which result, then close (1006)`,
      });
      await labStep("adding the wire close rule", () => cut.inject());

      const t0 = Date.now();
      const invoke = lab.operator.client
        // expectation: INVOKE_BOUND_S is the check's bound ("resolves ... within 25 s"): fixed, not paced
        .request("node.invoke", { nodeId: before.nodeId, command: "system.which", params: { bins: [bin] }, idempotencyKey: crypto.randomUUID(), timeoutMs: 15_000 }, { timeoutMs: INVOKE_BOUND_S * 1000, expectation: true })
        .then(
          (payload): InvokeEnd => ({ ok: true as const, payload: payload as { ok?: boolean; payload?: { bins?: Record<string, string> } }, ms: Date.now() - t0 }),
          (err: unknown): InvokeEnd => ({ ...refusal(err), ms: Date.now() - t0 }),
        );

      // The rule must fire on the node's result frame: that is the lab's part of the repro.
      const fired = await cut.fired(15_000).catch(async (err: Error) => {
        const early = await invoke;
        throw new LabInfraError(`the close rule never fired on the node's system.which result (invoke ended ${JSON.stringify(early)}): ${err.message}`);
      });
      const after = await tap.events({ since });
      const trigger = after.find((e) => e.kind === "frame" && e.seq === fired.seq);
      const faultEvent = after.find((e) => e.kind === "conn" && e.event === "fault" && e.rule === cut.ruleId);
      if (!faultEvent || !("after" in faultEvent) || faultEvent.after !== true) {
        throw new LabInfraError(`the tap did not record the close as "after" the trigger frame: ${JSON.stringify(faultEvent ?? null)}`);
      }
      const invokeResult = await invoke;
      log(`tap closed ${conn} behind the result frame #${fired.seq}; node.invoke answered in ${invokeResult.ms} ms: ${JSON.stringify(invokeResult)}`);

      // The gateway's answer to the forwarded result frame, if it wrote one before its socket went.
      const reply = after.find((e) => e.kind === "frame" && e.dir === "gw->node" && e.type === "res" && e.replyTo === "node.invoke.result" && e.conn === fired.conn);
      const gatewayLog = await memberLogLines(lab, lab.gateway.alias, t0 - 1_000).catch((e: Error) => [`(gateway log unreadable: ${e.message})`]);
      const drainLines = gatewayLog.filter((l) => /node lifecycle dispatch drain|node disconnected|PAIRING_CHANGED/.test(l));

      observe("invoke", { bin, binPath, result: invokeResult });

      // The node comes back on its own as the same node.
      // expectation: "reconnects within RECONNECT_BOUND_S" (R-116363-same-node); a time-out is "not reconnected"
      const back = await waitReconnect(tap, since, RECONNECT_BOUND_S * 1000, { expectation: true }).catch(() => undefined);
      await cut.heal();
      const reconnectMs = back ? Math.round(back.t - fired.t) : null;
      const node = back ? await waitConnected(lab, alias, true, { timeoutMs: 30_000, signal }).then(() => nodeView(lab, alias)) : await nodeView(lab, alias);
      observe("reconnect", { conn, back: back ? { conn: back.conn, seq: back.seq } : null, before, after: node });
      log(`node reconnected ${back ? `on ${back.conn} ${reconnectMs} ms after the close` : "not at all"}; gateway reply to the forwarded result: ${JSON.stringify(reply ?? null)}; gateway log: ${JSON.stringify(drainLines)}`);

      Object.assign(evidence, {
        bin: binPath,
        conn,
        fired,
        triggerFrame: trigger ?? null,
        faultEvent,
        invoke: invokeResult,
        gatewayReplyToResult: reply ?? null,
        gatewayLog: drainLines,
        reconnect: back ? { conn: back.conn, ms: reconnectMs } : null,
        after: node,
        tap: await controlEvents(tap, since),
      });

      await labStep(`removing ${binPath}`, async () => {
        undoBin();
        await lab.exec(alias, ["rm", "-f", binPath], { user: "root" });
      });
      // Shared lab: leave the node able to take worker turns.
      await waitForWorkerHost(lab, alias, { timeoutMs: 90_000, signal });
    });
  },
});


