// A recorder of the operator connection's events that matter for approval and tool flows:
// every approval event, chat terminal states, agent lifecycle and tool items. Everything else
// stays out so the evidence stays readable (the full frame transcript is in lab/transcripts).
import type { EventFrame, GatewayClient } from "../clients/gateway.ts";
import type { RecordedEvent } from "../evidence/records/index.ts";

/** A parked call as plugin.approval.requested carries it (lab/kits/approvals.ts waits for one). */
export interface ApprovalRequested {
  id: string;
  approvalKind?: string;
  request?: { toolName?: string; runId?: string; sessionKey?: string; toolCallId?: string };
}

/** One kept event, as events.json holds it: its shape is declared once, in the evidence records. */
export type Recorded = RecordedEvent;

export class EventLog {
  readonly events: Recorded[] = [];
  #off: () => void;

  readonly client: GatewayClient;
  /** Starts recording `client`'s events at once; stop() ends it. */
  constructor(client: GatewayClient) {
    this.client = client;
    this.#off = client.on("*", (payload: unknown, frame: EventFrame) => {
      if (EventLog.keep(frame.event, payload)) this.events.push({ t: Date.now(), event: frame.event, payload });
    });
  }

  static keep(event: string, payload: unknown): boolean {
    if (event.includes("approval")) return true;
    const p = (payload ?? {}) as { state?: unknown; stream?: unknown; data?: { kind?: unknown } };
    if (event === "chat") return p.state !== "delta" && p.state !== "status";
    if (event === "agent") return p.stream === "lifecycle" || (p.stream === "item" && p.data?.kind === "tool");
    return false;
  }

  stop(): void {
    this.#off();
  }

  approvals(): Recorded[] {
    return this.events.filter((e) => e.event.includes("approval"));
  }

  /** plugin.approval.requested payloads for one run (or all). */
  approvalRequests(runId?: string): ApprovalRequested[] {
    return this.events
      .filter((e) => e.event === "plugin.approval.requested")
      .map((e) => e.payload as ApprovalRequested)
      .filter((p) => runId === undefined || p.request?.runId === runId);
  }

  /** The terminal chat state of a run ("final", "aborted", "error"), if one was seen. */
  chatOutcome(runId: string): string | undefined {
    const hit = this.events.filter((e) => e.event === "chat" && (e.payload as { runId?: string }).runId === runId).at(-1);
    return (hit?.payload as { state?: string } | undefined)?.state;
  }

  /** End states of the run's tool items: [{name, status}]. */
  toolItems(runId: string): { name: string; status: string }[] {
    return this.events
      .filter((e) => e.event === "agent")
      .map((e) => e.payload as { runId?: string; stream?: string; data?: { kind?: string; phase?: string; name?: string; status?: string } })
      .filter((p) => p.runId === runId && p.stream === "item" && p.data?.kind === "tool" && p.data.phase === "end")
      .map((p) => ({ name: p.data?.name ?? "", status: p.data?.status ?? "" }));
  }
}
