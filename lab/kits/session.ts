// One operator session, everything a repro does with it in one place: send a turn, wait for
// its end (agent.wait's "pending" and "timeout" are observations, not errors), abort it
// (chat.abort for one run, sessions.abort for the session), read its history, describe it and
// its placement, dispatch, reclaim and delete it, hold a turn at its model request; and restart the
// gateway under it and get the operator back. Every call goes through the lab's operator (its
// frames land in the operator transcript); after a gateway restart the operator's socket is
// gone, and restartGateway() reconnects it (Lab.reconnectOperator).
//
//   const s = await openSession(lab);                     // a gateway session (no workspace)
//   const w = await openSession(lab, { workspace: ws });  // a worker session on a checkout
//   await w.dispatch("node-1");
//   const run = await s.send("hello");                    // chat.send -> runId
//   const end = await s.wait(run.runId, 60_000);         // {status: ok|error|timeout|pending, text}
//   await s.abort(run.runId);                             // chat.abort {sessionKey, runId}
import crypto from "node:crypto";
import { z } from "zod";
import type { GatewayClient } from "../clients/gateway.ts";
import { AgentWaitResultSchema, chatHistory, chatPendingInputs, createSession, describeSession, messageText, sendChat, type HistoryMessage, type PendingInput, type Placement, type QueueMode, type SessionRow } from "../clients/sessions.ts";
import type { HeldRequest } from "../clients/model.ts";
import { isRefused, refusal, type Refused } from "../clients/operator.ts";
import { faults, type FaultTimeline } from "../faults/index.ts";
import { deadline, PacedBudget } from "../core/pace.ts";
import { sleep } from "../core/wait.ts";
import { LabInfraError } from "../definitions/verdict.ts";
import type { Lab } from "../topology/lab.ts";
import { dispatchOrRefusal, dispatchTo, reclaim, uniqueName, type Dispatched, type DispatchOutcome } from "./workers.ts";
import type { PublishedWorkspace } from "./workspace.ts";

/** How a run ended, as agent.wait says it (with the reply text, when there is one). */
export interface RunEnd {
  runId: string;
  /** "ok", "error", "timeout" (the wait ended, the run may go on) or "pending" (still queued). */
  status: string;
  text?: string;
  error?: unknown;
  stopReason?: string;
  /** Everything agent.wait answered, for evidence. */
  raw: Record<string, unknown>;
  /** How long the wait took. */
  ms: number;
}

export class Session {
  readonly lab: Lab;
  readonly key: string;
  constructor(
    lab: Lab,
    key: string,
  ) {
    this.lab = lab;
    this.key = key;
  }

  get client(): GatewayClient {
    return this.lab.operator.client;
  }

  /**
   * chat.send: the turn is admitted (`runId`) and runs on; wait() for its end. `queueMode`
   * ("followup": queue it behind a running turn instead of steering that turn) for this message only.
   */
  async send(message: string, opts: { idempotencyKey?: string; queueMode?: QueueMode } = {}): Promise<{ runId: string; status: string; sentAt: number }> {
    const sentAt = Date.now();
    const r = await sendChat(this.client, this.key, message, opts.idempotencyKey ?? crypto.randomUUID(), { queueMode: opts.queueMode });
    return { runId: r.runId, status: r.status, sentAt };
  }

  /**
   * agent.wait for a run, up to `timeoutMs`; "pending"/"timeout" are returned, not thrown. The
   * gateway counts the bound in wall time: the lab's own wait (the default) hands it `timeoutMs`
   * at the machine's pace (lab/core/pace.ts deadline()); with `expectation` (a window whose length
   * is judged: "ended within N s", "still running after N s") it is handed as it is.
   */
  async wait(runId: string, timeoutMs: number, opts: { expectation?: boolean } = {}): Promise<RunEnd> {
    return this.#wait(runId, opts.expectation ? timeoutMs : deadline(timeoutMs));
  }

  /** agent.wait with a bound in wall ms as the gateway counts it (already at the pace, or the expectation). */
  async #wait(runId: string, wallMs: number): Promise<RunEnd> {
    const t0 = performance.now();
    // fixed: the gateway counts wallMs itself (already at the pace, or the expectation); the socket only waits 5 s past it
    const raw = await this.client.request("agent.wait", { runId, timeoutMs: wallMs }, { timeoutMs: wallMs + 5_000, expectation: true });
    const r = AgentWaitResultSchema.parse(raw);
    let text = r.terminalReply?.text;
    // A node-placed turn's wait may carry no reply text: the last assistant message of the run is it.
    if (r.status === "ok" && text === undefined) text = lastAssistantText(await this.history().catch(() => []), runId);
    return { runId, status: r.status, text, error: r.error, stopReason: r.stopReason, raw: raw as Record<string, unknown>, ms: Math.round(performance.now() - t0) };
  }

  /**
   * agent.wait again and again until the run ends (ok or error) or `deadlineMs` has passed:
   * agent.wait answers "pending" early for a queued run (after a couple of seconds, whatever its
   * timeoutMs) and "timeout" at its own; both are waited through. Returns the last answer, with
   * how many waits it took; a run still pending or running at the deadline comes back as such.
   * `deadlineMs` is the lab's own wait, spent at the machine's pace (lab/core/pace.ts), unless
   * `expectation` makes it the fixed bound that is judged ("ended within N s").
   */
  async waitEnd(runId: string, deadlineMs: number, opts: { signal?: AbortSignal; expectation?: boolean } = {}): Promise<RunEnd & { waits: number }> {
    const budget = new PacedBudget(deadlineMs, !!opts.expectation);
    let waits = 0;
    for (;;) {
      // Each agent.wait is handed the wall time left at today's pace (the gateway counts wall time).
      const end = await this.#wait(runId, Math.max(1, budget.leftWallMs()));
      waits += 1;
      const done = end.status !== "pending" && end.status !== "timeout";
      if (done || budget.expired() || opts.signal?.aborted) return { ...end, ms: budget.elapsed(), waits };
      // A pending answer comes back at once: do not spin on it.
      if (end.status === "pending") await sleep(Math.min(500, budget.leftWallMs()), opts.signal).catch(() => {});
      if (opts.signal?.aborted) return { ...end, ms: budget.elapsed(), waits };
    }
  }

  /** send() then wait(): one whole turn (`expectation`: see wait()). */
  async turn(message: string, timeoutMs = 120_000, opts: { expectation?: boolean } = {}): Promise<RunEnd> {
    const { runId } = await this.send(message);
    return this.wait(runId, timeoutMs, opts);
  }

  /** chat.abort {sessionKey, runId?}: without runId, the session's authorized active runs. */
  abort(runId?: string): Promise<Record<string, unknown> | Refused> {
    return this.#call("chat.abort", { sessionKey: this.key, ...(runId ? { runId } : {}) });
  }

  /** sessions.abort {key, runId?, clearQueued?}: the session's active work (and its queues). */
  abortSession(opts: { runId?: string; clearQueued?: boolean } = {}): Promise<Record<string, unknown> | Refused> {
    return this.#call("sessions.abort", { key: this.key, ...opts });
  }

  history(limit = 50): Promise<HistoryMessage[]> {
    return chatHistory(this.client, this.key, limit);
  }

  /** Accepted input not yet in the transcript (chat.history's pendingInputs): queued, interrupted or cancelled; undefined when the version's chat.history has no such field. */
  pendingInputs(): Promise<PendingInput[] | undefined> {
    return chatPendingInputs(this.client, this.key);
  }

  describe(): Promise<SessionRow> {
    return describeSession(this.client, this.key);
  }

  async placement(): Promise<Placement | undefined> {
    return (await this.describe()).placement;
  }

  /** sessions.dispatch to a node by alias, or "auto". */
  dispatch(to: string | "auto"): Promise<Dispatched> {
    return dispatchTo(this.lab, this.key, to);
  }

  /** sessions.dispatch with the gateway's refusal kept as data (dispatchOrRefusal, lab/kits/workers.ts): `{ ok: true, placement, ms }` or `{ ok: false, code, detailsCode?, message, ms }`. */
  dispatchOrRefusal(to: string | "auto"): Promise<DispatchOutcome> {
    return dispatchOrRefusal(this.lab, this.key, to);
  }

  /** sessions.reclaim: bring the session back to the gateway. */
  reclaim(): Promise<Placement> {
    return reclaim(this.lab, this.key);
  }

  /**
   * Hold the model request of the next turn whose message contains `token` (the model answers
   * one delta, then waits): the turn is then provably in flight. Release with lab.model.release().
   */
  async hold(token: string, withinMs = 60_000, opts: { expectation?: boolean } = {}): Promise<HeldRequest> {
    return this.lab.model.waitForHeld(withinMs, (h) => h.userText.includes(token), undefined, opts);
  }

  async #call(method: string, params: Record<string, unknown>): Promise<Record<string, unknown> | Refused> {
    try {
      return (await this.client.request(method, params)) as Record<string, unknown>;
    } catch (err) {
      return refusal(err);
    }
  }
}

/**
 * A session for a repro: on the gateway (no workspace; the key only, the gateway creates it at
 * its first turn), or a worker session on a published workspace (sessions.create with a managed
 * worktree, which dispatch to a node needs).
 */
export async function openSession(lab: Lab, opts: { workspace?: PublishedWorkspace; key?: string; label?: string } = {}): Promise<Session> {
  const key = opts.key ?? `agent:main:${uniqueName("fleetlab")}`;
  if (opts.workspace) await createSession(lab.operator.client, { key, label: opts.label, cwd: opts.workspace.gatewayCheckout, worktree: true });
  return new Session(lab, key);
}

/** Arm a hold for the next model request containing `token` (call before send()). */
export async function armHold(lab: Lab, token: string): Promise<void> {
  await lab.model.hold({ match: { contains: token }, count: 1 });
}

/**
 * Restart the gateway container (docker restart: SIGTERM, then SIGKILL after `graceSeconds`)
 * and reconnect the operator; how long each took. Sessions keep their keys: the same Session
 * objects work afterwards. The wait for the gateway's /readyz is a bring-up, paced as the lab's
 * own (lab/core/pace.ts): on a loaded 2-core machine a start took 176 s where it takes 12.
 */
export async function restartGateway(lab: Lab, opts: { graceSeconds?: number; timeoutMs?: number } = {}): Promise<{ restartMs: number; readyMs: number; connectMs: number }> {
  const t0 = performance.now();
  await faults.restart(lab, lab.spec.gateway.alias, { timeoutSeconds: opts.graceSeconds ?? 10, timeoutMs: 60_000 }).inject();
  const restartMs = Math.round(performance.now() - t0);
  const r = await lab.reconnectOperator({ timeoutMs: opts.timeoutMs ?? 120_000 });
  return { restartMs, ...r };
}

/**
 * Stop the gateway (SIGTERM, SIGKILL after `graceSeconds`), start the same container again on its
 * state volume, and reconnect the operator; says whether the stop was graceful (the gateway
 * exited by itself within the grace: exit code other than 137) and how long each step took.
 */
export async function stopStartGateway(lab: Lab, opts: { graceSeconds?: number; timeoutMs?: number; timeline?: FaultTimeline; signal?: AbortSignal } = {}): Promise<{ exitCode: number | null; graceful: boolean; stopMs: number; startMs: number; readyMs: number; connectMs: number }> {
  const stop = faults.stop(lab, lab.spec.gateway.alias, { timeoutSeconds: opts.graceSeconds ?? 10, timeline: opts.timeline });
  const stopped = await stop.inject();
  const started = await stop.heal();
  const r = await lab.reconnectOperator({ timeoutMs: opts.timeoutMs ?? 120_000, signal: opts.signal });
  const d = (stopped.detail ?? {}) as { exitCode?: number; graceful?: boolean };
  return { exitCode: d.exitCode ?? null, graceful: d.graceful === true, stopMs: Math.round(stopped.totalMs), startMs: Math.round(started.totalMs), ...r };
}

/**
 * SIGKILL the gateway (no drain, no shutdown), start the same container again on its state
 * volume, and get the operator back. The container is not removed, so the gateway's state lease
 * is its own again at start (a new container on the same volume would wait for the lease).
 */
export async function killGateway(lab: Lab, opts: { timeoutMs?: number; timeline?: FaultTimeline; signal?: AbortSignal } = {}): Promise<{ killMs: number; startMs: number; readyMs: number; connectMs: number }> {
  const kill = faults.kill(lab, lab.spec.gateway.alias, { timeline: opts.timeline });
  const killed = await kill.inject();
  const started = await kill.heal();
  const r = await lab.reconnectOperator({ timeoutMs: opts.timeoutMs ?? 120_000, signal: opts.signal });
  return { killMs: Math.round(killed.totalMs), startMs: Math.round(started.totalMs), ...r };
}

/** The text of the last assistant message of `runId` (or the last one at all) in a history. */
export function lastAssistantText(history: HistoryMessage[], runId?: string): string | undefined {
  const mine = history.filter((m) => m.role === "assistant" && (!runId || !m.__openclaw?.runId || m.__openclaw.runId === runId));
  const last = mine[mine.length - 1];
  return last ? messageText(last.content) : undefined;
}

/**
 * The reply of a run that ended ok: agent.wait's terminalReply, else (a version whose wait
 * carries none, as 2026.9.4 for a node-placed turn) the run's last assistant message in the
 * session's history. Undefined for a run that did not end ok or said nothing.
 */
export async function replyOf(client: GatewayClient, sessionKey: string, end: { runId?: string; status: string; terminalReply?: { text?: string } }, runId = end.runId): Promise<string | undefined> {
  if (end.status !== "ok") return undefined;
  if (end.terminalReply?.text !== undefined) return end.terminalReply.text;
  const history = await chatHistory(client, sessionKey).catch((err: Error) => {
    throw new LabInfraError(`the run ended ok without terminalReply and its history could not be read: ${err.message}`);
  });
  return lastAssistantText(history, runId);
}

/** sessions.delete {key} (answer or refusal as data). */
export async function deleteSession(lab: Lab, key: string): Promise<Record<string, unknown> | Refused> {
  return lab.operator.client.request<Record<string, unknown>>("sessions.delete", { key }).catch(refusal);
}

/** sessions.describe {key} (answer or refusal as data): a deleted session's row, if any. */
export async function describeOrRefusal(lab: Lab, key: string): Promise<Record<string, unknown> | Refused> {
  return lab.operator.client.request<Record<string, unknown>>("sessions.describe", { key }).catch(refusal);
}

/** Gateway errors as data (the operator client's), re-exported so a scenario imports one module. */
export { isRefused, refusal, type Refused };

/** zod for what a repro reads back, re-exported so a scenario imports one module. */
export { z };
