import { describe, expect, it } from "vitest";
import type { EventFrame, GatewayClient } from "../clients/gateway.ts";
import { StopWaiting, WaitTimeout } from "../core/wait.ts";
import { waitApproval } from "./approvals.ts";
import { EventLog } from "./events.ts";

/** Just enough of a gateway connection for an EventLog: events are pushed by the test. */
function fakeClient() {
  const listeners: ((payload: unknown, frame: EventFrame) => void)[] = [];
  const client = {
    connected: true,
    on: (_event: string, fn: (payload: unknown, frame: EventFrame) => void) => {
      listeners.push(fn);
      return () => listeners.splice(listeners.indexOf(fn), 1);
    },
  };
  const emit = (event: string, payload: unknown) => listeners.forEach((fn) => fn(payload, { type: "event", event, payload }));
  return { client, emit, asGateway: client as unknown as GatewayClient };
}

const requested = (id: string, runId: string) => ({ id, request: { toolName: "south__write_file", runId } });

describe("waitApproval", () => {
  it("returns the run's approval request, recorded before or after it started waiting", async () => {
    const f = fakeClient();
    const events = new EventLog(f.asGateway);
    f.emit("plugin.approval.requested", requested("a1", "other-run"));
    const waiting = waitApproval(events, "run-1", { timeoutMs: 2_000 });
    setTimeout(() => f.emit("plugin.approval.requested", requested("a2", "run-1")), 100);
    expect((await waiting).id).toBe("a2");
    expect((await waitApproval(events, undefined, { timeoutMs: 100 })).id).toBe("a1");
  });

  it("ends at once when the operator connection is closed, and times out naming the run otherwise", async () => {
    const f = fakeClient();
    const events = new EventLog(f.asGateway);
    const t0 = Date.now();
    const timedOut = await waitApproval(events, "run-2", { timeoutMs: 150 }).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(WaitTimeout);
    expect((timedOut as Error).message).toMatch(/plugin\.approval\.requested for run run-2.*approval events seen: 0/);
    f.client.connected = false;
    const closed = await waitApproval(events, "run-2", { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(closed).toBeInstanceOf(StopWaiting);
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it("ends when the scenario's signal is aborted", async () => {
    const f = fakeClient();
    const events = new EventLog(f.asGateway);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error("scenario out of time")), 50);
    await expect(waitApproval(events, "run-3", { timeoutMs: 5_000, signal: ctl.signal })).rejects.toThrow("scenario out of time");
  });
});
