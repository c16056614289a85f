import { isDeepStrictEqual } from "node:util";
import { defineScenario, type FindingRecord } from "../lab/scenario.ts";
import { faults } from "../lab/faults/index.ts";
import { chatHistory, waitRun } from "../lab/clients/sessions.ts";
import type { GatewayClient } from "../lab/clients/gateway.ts";
import { writeJson } from "../lab/evidence/write.ts";
import { approvalState, resolveApproval, waitApproval, type ApprovalRequested, type ApprovalState } from "../lab/kits/approvals.ts";
import { EventLog } from "../lab/kits/events.ts";
import { writeToolPolicy } from "../lab/kits/gateway-config.ts";
import { saveMcpEvidence, toolCallsIn, watchForCall } from "../lab/kits/mcp.ts";
import { sendTurn, toolResults, type ToolResult } from "../lab/kits/turns.ts";
import type { Lab } from "../lab/topology/lab.ts";
import { pollUntil } from "../lab/core/wait.ts";
import { refusal, type Refused } from "../lab/clients/operator.ts";

// Points 3 and 5 of the multi-MCP reference (scenarios/mcp-policy.ts has 1, 2 and 4), on the
// same host tool policy file (spec `gateway.toolPolicy`: OpenClaw's `tools` policy in
// /etc/fleetlab/policy/tool-policy.json, included by the gateway config; it lives on the gateway
// container's filesystem, so it is what the gateway reads when it starts again).
// A gated south__write_file call is parked (the lab's approval plugin). Then:
//  3. R-mcp-approval-restart-fail-closed (pass on 2026.9.6): "the runtime SIGKILLed while an
//     approval is parked and started again under a changed policy: answering that approval is refused, the
//     approval is still there under the same id, and nothing ran". The policy file is edited
//     while the call is parked (a change that does not touch south__write_file: north's echo
//     denied), the gateway container is SIGKILLed and started again (same container, same state
//     volume) and comes up with the changed policy (config.get shows it); the operator then
//     answers allow-once. OpenClaw keeps plugin approvals in its state database
//     (operator_approvals) and, at start, closes every pending one left by an earlier process
//     (dist/operator-approval-store-*.mjs closeOrphanedOperatorApprovals: status "cancelled",
//     terminal_reason "gateway-restart"): the refusal comes from the restart, whatever the
//     policy. "Identity changed" has no equivalent beyond this restart: OpenClaw binds no
//     approval to a policy digest (operator_approvals rows carry no policy or config hash), nor
//     to an MCP server's identity: it never reads an MCP server's serverInfo (no call of the
//     SDK's Client.getServerVersion() anywhere in dist/; the bundle-mcp runtime keys servers by
//     their configured name), so restarting north or south with another serverInfo under a
//     parked call is not something OpenClaw can notice.
//  5. R-mcp-approval-restart (differs from reference on 2026.9.6): "approvals are durable:
//     started again with the original policy in its proper place, the same parked approval (same id) is still pending and listed, one
//     allow-once runs the call exactly once, and the turn completes with the server's result".
//     The original policy bytes are written back, the gateway is SIGKILLed and started again,
//     and the same approval is looked up (approval.get, plugin.approval.list) and answered.
//     After each restart approval.get is asked again for up to LOOKUP_S while it refuses (one run
//     of 2026.9.6 read {status: null} here once: a look-up right after the restart, refused), and
//     every answer is kept in the evidence; a record is the observation, "not found" only when it
//     lasted the whole window.
// OpenClaw also resumes interrupted turns after a restart with a system message; the scripted
// model answers that message by issuing the same call again, so the scenario also sees whether
// work resumed after the restart can run the call without a fresh approval
// (R-mcp-approval-restart-resumed, pass: it asks again or is refused; seen both, depending on
// whether the recovery turn starts before an approval client is back). One of the two must be
// seen within RESUMED_WITHIN_S of the refused answer: neither is its own observation
// (the resumed call hangs unasked), not a pass.
//
// Registered findings: what OpenClaw was seen to do short of this scenario's expectations
// (judged by lab/findings/findings.ts). Add one only with its exact signature and the run
// folder that showed it.
const findings: FindingRecord[] = [
  {
    // Fail-closed, not durable: the restart closed the pending approval for good
    // (cancelled, gateway-restart); it is no longer listed, allow-once is refused, nothing runs.
    id: "R-mcp-approval-restart",
    expectation: "approvals are durable: started again with the original policy, the same parked approval (same id) is still pending and listed, one allow-once runs the call exactly once, and the turn completes with the server's result",
    signature: {
      startedWithOriginalPolicy: true,
      approval: { status: "cancelled", reason: "gateway-restart" },
      listedPending: false,
      answer: "INVALID_REQUEST: unknown or expired approval id",
      serverCalls: 0,
      executed: 0,
      resultOfParkedCall: null,
    },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/R-mcp-approval-restart.json",
  },
];

const ARGS = '{"path":"restart.txt","content":"x"}';
/** The original host policy: the gated tool explicitly allowed (it still asks: the plugin gates it). */
const POLICY = { alsoAllow: ["south__write_file"] };
/** Changed while the call is parked: something else is denied; the parked tool's own entry stays. */
const CHANGED_POLICY = { alsoAllow: ["south__write_file"], deny: ["north__example_echo"] };
/** How long after the refused answer the resumed call must be asked about or answered. */
const RESUMED_WITHIN_S = 60;
/** How long a fresh approval request of the resumed call is watched for a call reaching south before it is answered (in the observed). */
const ASKED_WATCH_MS = 1_500;
// The body drives and observes (ctx.observe); the checks below judge what it observed.

/** An answer to approval.resolve as kept: applied, or the refusal. */
type Answer = { ok: true } | Refused;
/** The policy the gateway runs with (config.get's tools). */
type Tools = { alsoAllow?: unknown; deny?: unknown };
/** A tool result of the session, by its tool call. */
type Result = { toolCallId: string; isError: boolean; text: string };

/** The gateway after a restart, and the answer to the parked approval: its policy, the approval's record, listed or not, the answer, south's calls and effects. */
interface AfterRestart {
  tools?: Tools;
  state: { id: string; status: string; reason?: string } | null;
  listed: boolean;
  answer: Answer;
  serverCalls: number;
  effects: number;
}
/** The resumed work after the first restart. */
interface Resumed {
  /** A new approval request or a result of the resumed call came within RESUMED_WITHIN_S of the refused answer. */
  askedOrAnswered: boolean;
  /** Each model request: the rule that answered and what its response carried. */
  modelRequests: { rule: string | null; output: string[] }[];
  /** The new approval request, if one came, and its denial: south's tools/call (their seqs) and its log position just before the answer. */
  newApproval: { id: string; within_ms: number; watchCalls: number; beforeDecision: number; callSeqs: number[]; denied: boolean; resumedRun: string | null } | null;
  /** The session's tool results (after the denial, when a new approval was asked). */
  results: Result[];
  serverCalls: number;
  effects: number;
}
/** After the second restart: the first restart's fields, the session's tool results and the original turn's run. */
interface Durable extends AfterRestart {
  results: Result[];
  originalRun: string;
}
export interface Observed {
  /** The parked approval: its id and its tool call. */
  parked?: { id: string; toolCallId?: string };
  firstRestart?: AfterRestart;
  resumed?: Resumed;
  secondRestart?: Durable;
  /** The lab's operator connection made after the second restart, once the approval was answered and the turn read: still open or not. */
  operator?: { connected: boolean };
}

const answerOf = (r: Awaited<ReturnType<typeof resolveApproval>>): Answer => (r.ok ? { ok: true } : { ok: false, code: r.code, ...(r.detailsCode ? { detailsCode: r.detailsCode } : {}), message: r.message });
const resultOf = (r: ToolResult): Result => ({ toolCallId: r.toolCallId, isError: r.isError, text: r.text });

/** R-mcp-approval-restart-fail-closed's signature. */
function failView(parked: { id: string }, a: AfterRestart) {
  return {
    startedWithChangedPolicy: isDeepStrictEqual(a.tools?.deny, CHANGED_POLICY.deny),
    approval: { sameId: a.state?.id === parked.id, status: a.state?.status ?? null, reason: a.state?.reason ?? null },
    listedPending: a.listed,
    answer: describeAnswer(a.answer),
    serverSawCall: a.serverCalls > 0,
    executed: a.effects > 0,
  };
}

/** R-mcp-approval-restart-resumed's signature: the decision on a new approval request (if one came), the resumed call's result. */
function resumedView(parked: { id: string; toolCallId?: string }, r: Resumed) {
  const n = r.newApproval;
  const decision = n
    ? {
        sameId: n.id === parked.id,
        within_ms: n.within_ms,
        serverCallsBeforeDecision: Math.max(n.watchCalls, n.callSeqs.filter((seq) => seq <= n.beforeDecision).length),
        denied: n.denied,
        resumedRun: n.resumedRun,
      }
    : {};
  const resumedResult = r.results.find((x) => x.toolCallId !== parked.toolCallId);
  return {
    within_s: RESUMED_WITHIN_S,
    askedOrAnswered: r.askedOrAnswered,
    reissuedCall: r.modelRequests.some((m) => m.rule === "resume-after-restart" && m.output.includes("function_call")),
    newApprovalRequested: n !== null,
    ...decision,
    resumedCallResult: resumedResult ? { isError: resumedResult.isError, text: resumedResult.text } : null,
    serverSawCall: r.serverCalls > 0,
  };
}

/** R-mcp-approval-restart's signature. */
function durableView(parked: { toolCallId?: string }, d: Durable) {
  return {
    startedWithOriginalPolicy: isDeepStrictEqual(d.tools?.alsoAllow, POLICY.alsoAllow) && d.tools?.deny === undefined,
    approval: { status: d.state?.status ?? null, reason: d.state?.reason ?? null },
    listedPending: d.listed,
    answer: describeAnswer(d.answer),
    serverCalls: d.serverCalls,
    executed: d.effects,
    resultOfParkedCall: d.results.find((r) => r.toolCallId === parked.toolCallId && !r.isError)?.text ?? null,
  };
}

export default defineScenario<Observed>({
  name: "mcp-approval-restart",
  proves: "a parked MCP approval across a hard gateway restart under a changed policy is refused and never executed (fail-closed); against the reference's durable approvals (the same approval pending after a restart with the original policy, then run once); resumed work needs a fresh approval",
  topology: "own",
  spec: { nodes: { count: 0 }, git: { enabled: false }, gateway: { toolPolicy: POLICY } },
  findings,
  timeoutMs: 360_000,
  checks: [
    {
      id: "R-mcp-approval-restart-fail-closed",
      expectation: "the gateway SIGKILLed while an approval is parked and started again under a changed policy: answering that approval is refused, the approval is still there under the same id, and nothing ran",
      judge: (h) => {
        if (!h.parked || !h.firstRestart) return undefined;
        const fail = failView(h.parked, h.firstRestart);
        return { holds: fail.startedWithChangedPolicy && !h.firstRestart.answer.ok && fail.approval.sameId && !fail.serverSawCall && !fail.executed, observed: fail };
      },
    },
    {
      id: "R-mcp-approval-restart-resumed",
      expectation: `work resumed after the restart cannot run the parked call without a fresh operator approval: within ${RESUMED_WITHIN_S} s it is asked about again or refused`,
      judge: (h) => {
        if (!h.parked || !h.resumed) return undefined;
        const resumed = resumedView(h.parked, h.resumed);
        const asked = h.resumed.newApproval;
        return {
          holds: resumed.askedOrAnswered && resumed.reissuedCall && !resumed.serverSawCall && h.resumed.effects === 0 && (!asked || (resumed.sameId === false && resumed.serverCallsBeforeDecision === 0)),
          observed: resumed,
        };
      },
    },
    {
      id: "R-mcp-approval-restart",
      expectation: "approvals are durable: started again with the original policy, the same parked approval (same id) is still pending and listed, one allow-once runs the call exactly once, and the turn completes with the server's result",
      kind: "differs-from-reference",
      judge: (h) => {
        if (!h.parked || !h.secondRestart) return undefined;
        const durable = durableView(h.parked, h.secondRestart);
        return {
          holds:
            durable.startedWithOriginalPolicy &&
            durable.approval.status === "pending" &&
            durable.listedPending &&
            h.secondRestart.answer.ok &&
            durable.serverCalls === 1 &&
            durable.executed === 1 &&
            durable.resultOfParkedCall === "south wrote 1 bytes to restart.txt" &&
            h.secondRestart.originalRun === "ok",
          observed: durable,
        };
      },
    },
    {
      id: "R-mcp-approval-restart-operator",
      expectation: "the operator's connection made after the restarts stays open while it answers the approval and reads the turn",
      judge: (h) => h.operator && { holds: h.operator.connected, observed: h.operator },
    },
  ],
  async run({ lab, log, file, observe, signal }) {
    const south = lab.mcp("south");
    await lab.model.setScript([
      {
        id: "resume-after-restart",
        match: { contains: "interrupted by a gateway restart" },
        rounds: [[{ toolCall: { name: "south__write_file", arguments: ARGS } }], [{ text: "fleetlab-ok: resumed: {{toolOutput}}" }]],
      },
    ]);
    const before = new EventLog(lab.operator.client);
    let after: EventLog | undefined;
    /** When the lab's operator was reconnected after the first restart (its frames from then on are kept apart). */
    let reconnectedAt: number | undefined;
    const extra: Record<string, unknown> = {};
    try {
      const turn = await sendTurn(lab.operator.client, `fleetlab-call south__write_file ${ARGS}`);
      // The first turn of a fresh gateway connects the MCP servers first: give it time.
      const parked = await waitApproval(before, turn.runId, { timeoutMs: 90_000, signal });
      const parkedSeen = { id: parked.id, toolCallId: parked.request?.toolCallId };
      observe("parked", parkedSeen);
      log(`parked ${parked.id}; the policy file is changed, then the gateway SIGKILLed`);
      await writeToolPolicy(lab, CHANGED_POLICY);

      // --- 3. restart under the changed policy ----------------------------------------------
      const first = await killAndStart(lab, "first restart (changed policy)", extra, signal);
      before.stop();
      reconnectedAt = first.reconnectedAt;
      const op2 = lab.operator.client;
      const afterLog = (after = new EventLog(op2));
      log(`gateway ready ${first.readyMs} ms after start; operator reconnected`);
      const underChanged = await lookUp(op2, parked.id, signal);
      if (underChanged.answers.length > 1 || !underChanged.state) log(`approval.get after the first restart: ${JSON.stringify(underChanged.answers)}`);
      const answer3 = await resolveApproval(op2, parked.id, "allow-once");
      // A refused answer can start nothing: the refusal closes the window. An applied one would
      // run the call in the original turn: its end closes the window then.
      const runAfterAnswer3 = answer3.ok ? await waitRun(op2, turn.runId, 30_000) : undefined;
      const firstSeen: AfterRestart = {
        tools: underChanged.tools,
        state: underChanged.state ? { id: underChanged.state.id, status: underChanged.state.status, reason: underChanged.state.reason } : null,
        listed: underChanged.listed,
        answer: answerOf(answer3),
        serverCalls: toolCallsIn(await south.requests()).length,
        effects: (await south.effects()).length,
      };
      const fail = failView(parkedSeen, firstSeen);
      log(`after the first restart: ${JSON.stringify(fail)}`);
      observe("firstRestart", firstSeen);

      // Resumed work: OpenClaw's recovery turn re-issues the call (scripted). It must not run
      // without a fresh approval: either a new approval is asked (denied here) or it is refused.
      const original = parked.request?.toolCallId;
      const seen = await pollUntil(
        "a new approval request or a result of the resumed call",
        async () => ({
          asked: afterLog.approvalRequests()[0],
          results: toolResults(await chatHistory(op2, turn.sessionKey)),
        }),
        (v) => v.asked !== undefined || v.results.some((r) => r.toolCallId !== original),
        { deadlineMs: RESUMED_WITHIN_S * 1000, intervalMs: 250, signal },
      );
      if (!seen.held) log(`neither a new approval request nor a result of the resumed call within ${RESUMED_WITHIN_S} s of the refused answer`);
      const next: ApprovalRequested | undefined = seen.last.asked;
      let results: ToolResult[] = seen.last.results;
      let newApproval: Resumed["newApproval"] = null;
      let resumedRun: string | undefined;
      if (next) {
        // A call that did not wait for this approval would reach south meanwhile: watched for
        // ASKED_WATCH_MS (ended at once by a call), then ordered by south's own log against the
        // answer; the bound is in the observed.
        const watch = await watchForCall(south, { withinMs: ASKED_WATCH_MS, signal });
        const beforeDecision = await south.lastSeq();
        const denied = await resolveApproval(op2, next.id, "deny");
        const end = next.request?.runId ? await waitRun(op2, next.request.runId, 30_000) : undefined;
        resumedRun = end?.status;
        const callSeqs = toolCallsIn(await south.requests()).map((r) => r.seq);
        newApproval = { id: next.id, within_ms: watch.within_ms, watchCalls: watch.calls, beforeDecision, callSeqs, denied: denied.ok, resumedRun: end?.status ?? null };
        results = toolResults(await chatHistory(op2, turn.sessionKey));
      }
      // What closes the window for the resumed call: the resumed run's end (after a new
      // approval was answered), or the resumed call's own result (it was refused or ran). With
      // neither (seen.held false) the check fails on that already.
      if (next && resumedRun === "timeout") log("the resumed run did not end within 30 s of the denial");
      const serverCalls = toolCallsIn(await south.requests()).length;
      const effects = (await south.effects()).length;
      const resumedSeen: Resumed = {
        askedOrAnswered: seen.held,
        modelRequests: (await lab.model.requests()).map((r) => ({ rule: r.rule, output: r.output.map((o) => o.type) })),
        newApproval,
        results: results.map(resultOf),
        serverCalls,
        effects,
      };
      const resumed = resumedView(parkedSeen, resumedSeen);
      log(`resumed: ${JSON.stringify(resumed)}; south tools/call ${serverCalls}, effects ${effects}`);
      observe("resumed", resumedSeen);

      // --- 5. started again with the original policy: is it the same approval, still pending? ---
      await writeToolPolicy(lab, POLICY);
      after.stop();
      const second = await killAndStart(lab, "second restart (original policy)", extra, signal);
      const op3 = lab.operator.client;
      const third = (after = new EventLog(op3));
      const underOriginal = await lookUp(op3, parked.id, signal);
      if (underOriginal.answers.length > 1 || !underOriginal.state) log(`approval.get after the second restart: ${JSON.stringify(underOriginal.answers)}`);
      const southBefore = await south.lastSeq();
      const answer5 = await resolveApproval(op3, parked.id, "allow-once");
      // An applied answer runs the call in the original turn: the turn's end closes the window.
      // A refused one can start nothing: the refusal closes it (the run is only read).
      const originalRun = answer5.ok ? await waitRun(op3, turn.runId, 30_000) : await waitRun(op3, turn.runId, 1_000);
      const calls5 = toolCallsIn(await south.requests({ since: southBefore }));
      const results5 = toolResults(await chatHistory(op3, turn.sessionKey)).map(resultOf);
      const secondSeen: Durable = {
        tools: underOriginal.tools,
        state: underOriginal.state ? { id: underOriginal.state.id, status: underOriginal.state.status, reason: underOriginal.state.reason } : null,
        listed: underOriginal.listed,
        answer: answerOf(answer5),
        serverCalls: calls5.length,
        effects: (await south.effects()).length,
        results: results5,
        originalRun: originalRun.status,
      };
      const durable = durableView(parkedSeen, secondSeen);
      log(`after the second restart (${second.readyMs} ms to ready): ${JSON.stringify(durable)}; original run: ${originalRun.status}; approval events since: ${third.approvals().length}`);
      extra.observations = { turn, parkedId: parked.id, first: { ...fail, lookUp: underChanged, answer: answer3, runAfterAnswer: runAfterAnswer3 ?? null }, resumed, serverCalls, effects, second: { ...durable, lookUp: underOriginal, answer: answer5, originalRun } };
      extra.history = await chatHistory(op3, turn.sessionKey);
      observe("secondRestart", secondSeen);
      if (!op3.connected) log("the operator connection after the restarts closed");
      observe("operator", { connected: op3.connected });
    } finally {
      before.stop();
      after?.stop();
      // Approval events before the first restart, and everything after it, in one file each.
      writeJson(file("approval-events-before-restart.json"), before.approvals());
      await saveMcpEvidence(lab, file, after ?? before, extra);
      if (reconnectedAt !== undefined) lab.operator.client.saveTranscript(file("operator-after-restart.jsonl"), { since: reconnectedAt });
    }
  },
});

/** SIGKILLs the gateway container, starts it again (same container, same state volume) and reconnects the lab's operator. */
async function killAndStart(lab: Lab, label: string, extra: Record<string, unknown>, signal: AbortSignal): Promise<{ readyMs: number; reconnectedAt: number }> {
  const kill = faults.kill(lab, lab.spec.gateway.alias);
  const injected = await kill.inject();
  const started = await kill.heal();
  extra[label] = { kill: injected, start: started };
  const reconnectedAt = Date.now();
  const { readyMs } = await lab.reconnectOperator({ timeoutMs: 90_000, signal });
  return { readyMs, reconnectedAt };
}

/** How long a look-up after a restart asks approval.get again while it is refused (storage still starting, or not found). */
const LOOKUP_S = 5;

/**
 * What the gateway says about the approval now: its record, whether it is listed as pending, and
 * the tool policy it runs with. approval.get is asked again for up to LOOKUP_S while it refuses
 * (UNAVAILABLE while the approval store starts, or not found), every answer kept: a record seen
 * once is the observation; "not found" counts only when it lasted the whole window.
 */
async function lookUp(client: GatewayClient, id: string, signal: AbortSignal): Promise<{ state: ApprovalState | null; stateError?: string; answers: { ms: number; answer: string }[]; listed: boolean; listRaw: unknown; tools?: { alsoAllow?: unknown; deny?: unknown } }> {
  const answers: { ms: number; answer: string }[] = [];
  const t0 = Date.now();
  const got = await pollUntil(
    `approval.get ${id} answering with a record`,
    async () => {
      try {
        const state = await approvalState(client, id);
        answers.push({ ms: Date.now() - t0, answer: `found: ${state.status}` });
        return { state, error: undefined };
      } catch (err) {
        const error = describeAnswer(refusal(err));
        answers.push({ ms: Date.now() - t0, answer: error });
        return { state: null, error };
      }
    },
    (v) => v.state !== null,
    { deadlineMs: LOOKUP_S * 1000, intervalMs: 250, signal },
  );
  const listRaw = await client.request("plugin.approval.list", {}).catch((e: Error) => ({ error: e.message }));
  const config = (await client.request("config.get", {}).catch(() => undefined)) as { config?: { tools?: { alsoAllow?: unknown; deny?: unknown } } } | undefined;
  return { state: got.last.state, stateError: got.last.error, answers, listed: JSON.stringify(listRaw).includes(JSON.stringify(id)), listRaw, tools: config?.config?.tools };
}

function describeAnswer(r: Answer): string {
  return r.ok ? "applied" : `${r.code}${r.detailsCode ? `/${r.detailsCode}` : ""}: ${r.message}`;
}
