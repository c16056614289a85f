import { defineScenario, labStep } from "../lab/scenario.ts";
import * as op from "../lab/clients/operator.ts";
import { refusal, isRefused, type Refused } from "../lab/clients/operator.ts";
import { normalise } from "../lab/findings/normalise.ts";
import { nodeEntry, pairScripted } from "../lab/kits/pairing.ts";
import { scene } from "../lab/kits/scene.ts";
import { answerOf, type InvokeAnswer } from "../lab/kits/node-wire.ts";
import { waitFor } from "../lab/core/wait.ts";

// The scripted node (lab/clients/scripted-node.ts) as a node the gateway serves: a node client
// the lab drives, on OpenClaw's node protocol, through a wire tap of its own (tap-scripted-1),
// with its own device identity. What a user of any node relies on, checked where it happens:
//   - S-node-pairs: from a first connect it pairs the way an operator pairs a node: the connect
//     is refused PAIRING_REQUIRED with a request id, device.pair.approve, a second connect, the
//     node pairing request of its declared commands, node.pair.approve; node.list then shows it
//     connected and approved;
//   - S-invoke-round-trip: an operator's node.invoke of a declared command (system.which) reaches
//     the node on its own connection (node.invoke.request with that command, params and the
//     invoke id on its tap) and the node's answer (node.invoke.result on the tap) is what the
//     operator gets back, unchanged;
//   - S-invoke-withheld-ends: a node.invoke (timeoutMs 3000) the node never answers ends for
//     the operator within that time plus 5 s, with an error, not a result;
//   - S-close-seen: the node closes its connection with code 4000; node.list shows it
//     disconnected within 5 s, still paired.
// Own lab: the gateway, the model and the scripted node's tap; no node host, MCP or git server.
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): WITHHOLD_TIMEOUT_MS
// + SLACK_MS for the withheld invoke, SLACK_MS for the close to show.
const WITHHOLD_TIMEOUT_MS = 3_000;
const SLACK_MS = 5_000;

// The body drives and observes (ctx.observe); the checks below judge what it observed.
export type Observed = {
  /** pairScripted's steps in order (with what each saw) and node.list's entry at the end. */
  pairing?: { steps: { step: string; detail?: Record<string, unknown> }[]; entry: { connected: boolean; approvalState?: string; paired?: boolean } };
  /**
   * The operator's node.invoke of system.which: the params it sent and the answer the node was
   * scripted with; the request and the node's result on the tap (null: not seen); what the node
   * received; what the operator got (the gateway's answer, or its refusal).
   */
  invoke?: { params: unknown; answer: unknown; request: { seq: number; invokeId?: string } | null; result: InvokeAnswer | null; received: { params?: unknown } | null; got: Record<string, unknown> | Refused };
  /** The invoke the node withheld: whether the node got it, what the operator got, after how long. */
  withheld?: { nodeGotIt: boolean; answer: Record<string, unknown> | Refused; endedMs: number };
  /** After the node closed: node.list's entry once it showed disconnected within SLACK_MS (null: it did not), and its entry then. */
  close?: { disconnected: { paired?: boolean } | null; entry: { connected?: boolean; paired?: boolean } | null };
};

/** What the operator's node.invoke returned: its payload (payloadJSON parsed), undefined when refused or empty. */
function returnedOf(got: Record<string, unknown> | Refused): unknown {
  return isRefused(got) ? undefined : (got.payload ?? (typeof got.payloadJSON === "string" ? JSON.parse(got.payloadJSON) : undefined));
}

export default defineScenario<Observed>({
  name: "scripted-node",
  proves: "a scripted node (the lab's own node client, through its own tap) pairs as an operator pairs a node, gets an operator's node.invoke on its connection and its answer reaches the operator unchanged; an invoke it withholds ends in time with an error; its close is seen in node.list",
  topology: "own",
  pairing: "fresh",
  spec: { nodes: { count: 0 }, scripted: { count: 1 }, mcp: { servers: [] }, git: { enabled: false } },
  timeoutMs: 120_000,
  checks: [
    {
      id: "S-node-pairs",
      expectation: "a new node's first connect is refused PAIRING_REQUIRED; after device.pair.approve it connects, the gateway asks node pairing for its declared commands, and after node.pair.approve node.list shows it connected and approved",
      judge: (h) => {
        if (!h.pairing) return undefined;
        const { steps, entry } = h.pairing;
        const order = steps.map((s) => s.step);
        return {
          holds: order.join(",") === "connect refused,device approved,connected,node pairing approved,listed approved" && entry.connected && entry.approvalState === "approved",
          observed: normalise({ steps: order, refusal: steps[0]?.detail ?? null, entry: { connected: entry.connected, approvalState: entry.approvalState, paired: entry.paired } }),
        };
      },
    },
    {
      id: "S-invoke-round-trip",
      expectation: "an operator's node.invoke of a declared command reaches the node on its own connection with its params, and the node's answer is what the operator gets back, unchanged",
      judge: (h) => {
        if (!h.invoke) return undefined;
        const { params, answer, request, result, received, got } = h.invoke;
        const returned = returnedOf(got);
        return {
          holds: !!request && !!received && JSON.stringify(received.params) === JSON.stringify(params) && !!result && JSON.stringify(result.payload) === JSON.stringify(answer) && JSON.stringify(returned) === JSON.stringify(answer),
          observed: normalise({ onTap: { request: !!request, result: !!result }, nodeGotParams: received?.params ?? null, operatorGot: isRefused(got) ? `${got.code}: ${got.message}` : (returned ?? null) }),
        };
      },
    },
    {
      id: "S-invoke-withheld-ends",
      expectation: `a node.invoke with timeoutMs ${WITHHOLD_TIMEOUT_MS} that reaches the node and is never answered ends for the operator with an error within ${WITHHOLD_TIMEOUT_MS + SLACK_MS} ms`,
      judge: (h) => {
        if (!h.withheld) return undefined;
        const { nodeGotIt, answer, endedMs } = h.withheld;
        return {
          holds: nodeGotIt && isRefused(answer) && answer.code !== "TIMEOUT" && endedMs <= WITHHOLD_TIMEOUT_MS + SLACK_MS,
          observed: normalise({ nodeGotIt, answer: isRefused(answer) ? { code: answer.code, detailsCode: answer.detailsCode ?? null } : "a result", within: endedMs <= WITHHOLD_TIMEOUT_MS + SLACK_MS }),
        };
      },
    },
    {
      id: "S-close-seen",
      expectation: `after the node closes its connection (4000), node.list shows it disconnected within ${SLACK_MS} ms, still paired`,
      judge: (h) => h.close && { holds: !!h.close.disconnected && h.close.disconnected.paired === true, observed: normalise({ disconnected: !!h.close.disconnected, paired: h.close.entry?.paired ?? null }) },
    },
  ],
  async run(ctx) {
    const { lab, log, observe, signal } = ctx;
    const alias = "scripted-1";
    const node = lab.scripted(alias);
    const tap = lab.tap(alias);
    await scene(ctx, { faults: false, evidence: { nodeId: node.nodeId, commands: node.commands } }, async ({ evidence }) => {
      // ---- pairing, as an operator pairs a node
      const paired = await pairScripted(lab, alias, { signal });
      log(`${alias} paired in ${paired.ms} ms: ${paired.steps.map((s) => `${s.step} @${s.ms} ms`).join(", ")}`);
      observe("pairing", { steps: paired.steps.map(({ step, detail }) => ({ step, detail })), entry: { connected: paired.entry.connected, approvalState: paired.entry.approvalState, paired: paired.entry.paired } });
      evidence.pairing = paired;

      // ---- an operator's node.invoke, answered by the node
      const answer = { path: "/usr/bin/git", fleetlab: "scripted" };
      node.answerWith("system.which", { ok: true, payload: answer });
      const since = await tap.seq();
      const params = { bins: ["git"] };
      const got = await lab.operator.client.request<Record<string, unknown>>("node.invoke", { nodeId: node.nodeId, command: "system.which", params, idempotencyKey: crypto.randomUUID(), timeoutMs: 10_000 }, { timeoutMs: 15_000 }).catch(refusal);
      const frames = await tap.frames({ since });
      const request = frames.find((f) => f.dir === "gw->node" && f.event === "node.invoke.request" && f.command === "system.which");
      const result = frames.find((f) => f.dir === "node->gw" && f.method === "node.invoke.result" && f.invokeId === request?.invokeId);
      const received = node.invokes().find((i) => i.id === request?.invokeId);
      log(`node.invoke system.which: ${JSON.stringify(got)}; on the tap: request ${request ? `#${request.seq}` : "none"}, result ${result ? `#${result.seq}` : "none"}`);
      observe("invoke", {
        params,
        answer,
        request: request ? { seq: request.seq, invokeId: request.invokeId } : null,
        result: result ? answerOf(result) : null,
        received: received ? { params: received.params } : null,
        got,
      });
      evidence.invoke = { operatorGot: got, requestSeq: request?.seq ?? null, resultSeq: result?.seq ?? null };

      // ---- an invoke the node withholds
      node.answerWith("system.notify", "withhold");
      const t0 = Date.now();
      const withheld = await lab.operator.client
        // expectation: the check judges a lab TIMEOUT against "ends within 8000 ms": the socket's bound is fixed, not paced
        .request<Record<string, unknown>>("node.invoke", { nodeId: node.nodeId, command: "system.notify", params: { title: "fleetlab" }, idempotencyKey: crypto.randomUUID(), timeoutMs: WITHHOLD_TIMEOUT_MS }, { timeoutMs: WITHHOLD_TIMEOUT_MS + SLACK_MS + 5_000, expectation: true })
        .catch(refusal);
      const endedMs = Date.now() - t0;
      const seen = node.invokes().find((i) => i.command === "system.notify");
      log(`node.invoke system.notify withheld by the node: ${JSON.stringify(withheld)} after ${endedMs} ms (node got it: ${!!seen})`);
      observe("withheld", { nodeGotIt: !!seen, answer: withheld, endedMs });
      evidence.withheld = { answer: withheld, endedMs };

      // ---- the node closes
      const closedAt = Date.now();
      await labStep(`${alias} closing its connection with 4000`, () => node.disconnect(4000, "scripted node leaves"));
      const after = await waitFor(`${alias} disconnected in node.list`, async () => {
        const e = await nodeEntry(lab, node.nodeId);
        return e && !e.connected ? e : undefined;
      }, { timeoutMs: SLACK_MS, bound: "expectation", intervalMs: 100, signal }).catch(() => undefined); // expectation: "disconnected within 5000 ms" (S-close-seen); a time-out is "not disconnected"
      const seenMs = after ? Date.now() - closedAt : null;
      const entry = after ?? (await nodeEntry(lab, node.nodeId));
      observe("close", { disconnected: after ? { paired: after.paired } : null, entry: entry ? { connected: entry.connected, paired: entry.paired } : null });
      evidence.close = { seenMs, entry: entry ?? null, pairingList: await op.listNodePairing(lab.operator.client).catch(refusal) };
    });
  },
});
