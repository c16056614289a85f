// Plugin approvals as the operator sees them: wait for a parked call's
// plugin.approval.requested, read an approval's durable record, and resolve it.
import { z } from "zod";
import type { GatewayClient } from "../clients/gateway.ts";
import { StopWaiting, waitFor } from "../core/wait.ts";
import type { ApprovalRequested, EventLog } from "./events.ts";

export type { ApprovalRequested };

/**
 * Waits (default 30 s) for plugin.approval.requested of this run (or any run), already
 * recorded by `events` or still to come; ends at once if its connection closes. `timeoutMs` is
 * the lab's own wait, paced (lab/core/pace.ts), unless `expectation` makes it the fixed bound
 * that is judged (a caller that turns the time-out into "not asked").
 */
export async function waitApproval(events: EventLog, runId: string | undefined, opts: { timeoutMs?: number; signal?: AbortSignal; expectation?: boolean } = {}): Promise<ApprovalRequested> {
  return waitFor(
    `plugin.approval.requested${runId ? ` for run ${runId}` : ""}`,
    () => {
      const hit = events.approvalRequests(runId)[0];
      if (hit) return hit;
      if (!events.client.connected) throw new StopWaiting("the operator connection closed while waiting for an approval request");
      return undefined;
    },
    { timeoutMs: opts.timeoutMs ?? 30_000, bound: opts.expectation ? "expectation" : "lab", intervalMs: 50, signal: opts.signal, lastState: () => `approval events seen: ${events.approvals().length}` },
  );
}

const ApprovalGetSchema = z.looseObject({ approval: z.looseObject({ id: z.string(), status: z.string(), reason: z.string().optional(), decision: z.string().optional() }) });
export type ApprovalState = z.infer<typeof ApprovalGetSchema>["approval"];

/** approval.get: the durable approval record (pending, or its terminal state with reason). */
export async function approvalState(client: GatewayClient, id: string): Promise<ApprovalState> {
  return ApprovalGetSchema.parse(await client.request("approval.get", { id })).approval;
}

/** Resolves an approval; returns the gateway's answer or the error code it refused with. */
export async function resolveApproval(client: GatewayClient, id: string, decision: "allow-once" | "deny"): Promise<{ ok: true; payload: unknown } | { ok: false; code: string; detailsCode?: string; message: string }> {
  try {
    const payload = decision === "deny" ? await client.request("approval.resolve", { id, kind: "plugin", decision }) : await client.request("plugin.approval.resolve", { id, decision });
    return { ok: true, payload };
  } catch (err) {
    const e = err as { code?: string; detailsCode?: string; gatewayMessage?: string; message: string };
    return { ok: false, code: e.code ?? "ERROR", detailsCode: e.detailsCode, message: e.gatewayMessage ?? e.message };
  }
}
