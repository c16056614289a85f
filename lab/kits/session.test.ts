import { describe, expect, it } from "vitest";
import type { GatewayClient } from "../clients/gateway.ts";
import { replyOf, Session } from "./session.ts";
import type { Lab } from "../topology/lab.ts";
import { LabInfraError } from "../definitions/verdict.ts";
import { MAX_FACTOR } from "../core/pace.ts";

/** A client whose chat.history answers `messages` (and counts the asks). */
function client(messages: unknown[]) {
  const asked: string[] = [];
  const c = { request: async (method: string) => (asked.push(method), { sessionKey: "s", messages }) } as unknown as GatewayClient;
  return { c, asked };
}

const assistant = (text: string, runId: string) => ({ role: "assistant", content: [{ type: "text", text }], __openclaw: { runId } });

describe("replyOf: the reply of a run that ended ok", () => {
  it("agent.wait's terminalReply when it has one (history is not read)", async () => {
    const { c, asked } = client([]);
    expect(await replyOf(c, "s", { runId: "r1", status: "ok", terminalReply: { text: "from the wait" } })).toBe("from the wait");
    expect(asked).toEqual([]);
  });

  it("a wait without terminalReply (2026.9.4, a node-placed turn): the run's last assistant message, not another run's", async () => {
    const { c } = client([assistant("first", "r1"), assistant("the answer", "r1"), assistant("later run", "r2")]);
    expect(await replyOf(c, "s", { runId: "r1", status: "ok" })).toBe("the answer");
  });

  it("a history the lab cannot read is the lab's (unknown), not a reply 'none' that would fail OpenClaw", async () => {
    const c = { request: async () => Promise.reject(new Error("socket closed")) } as unknown as GatewayClient;
    await expect(replyOf(c, "s", { runId: "r1", status: "ok" })).rejects.toThrow(LabInfraError);
  });

  it("a run that did not end ok has no reply, whatever history holds", async () => {
    const { c, asked } = client([assistant("partial", "r1")]);
    expect(await replyOf(c, "s", { runId: "r1", status: "timeout" })).toBeUndefined();
    expect(asked).toEqual([]);
  });
});

describe("Session.waitEnd: agent.wait through its early pending and its own timeout", () => {
  /** A session whose agent.wait answers `answers` in turn (then the last one again), recording each timeoutMs. */
  function session(answers: Record<string, unknown>[]) {
    const asked: number[] = [];
    let i = 0;
    const request = async (method: string, params: { timeoutMs?: number }) => {
      if (method !== "agent.wait") return { sessionKey: "s", messages: [] };
      asked.push(params.timeoutMs ?? -1);
      return { runId: "r1", ...answers[Math.min(i++, answers.length - 1)] };
    };
    const lab = { operator: { client: { request } } } as unknown as Lab;
    return { s: new Session(lab, "s"), asked };
  }

  it("waits again after pending and after timeout, until the run ends; each agent.wait is handed the wall time left at the machine's pace", async () => {
    const { s, asked } = session([{ status: "pending" }, { status: "timeout" }, { status: "ok", terminalReply: { text: "done" } }]);
    const end = await s.waitEnd("r1", 5_000);
    expect(end).toMatchObject({ status: "ok", text: "done", waits: 3 });
    expect(asked).toHaveLength(3);
    expect(asked.every((ms) => ms > 0 && ms <= 5_000 * MAX_FACTOR)).toBe(true);
  });

  it("with expectation the bound is wall time, handed to the gateway as it is (never stretched by the pace)", async () => {
    const { s, asked } = session([{ status: "timeout" }, { status: "ok", terminalReply: { text: "done" } }]);
    expect(await s.waitEnd("r1", 5_000, { expectation: true })).toMatchObject({ status: "ok", waits: 2 });
    expect(asked.every((ms) => ms > 0 && ms <= 5_000)).toBe(true);
    const once = session([{ status: "timeout" }]);
    await once.s.wait("r1", 2_000, { expectation: true });
    expect(once.asked).toEqual([2_000]);
  });

  it("a lab-side wait hands the gateway its budget at the machine's pace (at least the figure, at most MAX_FACTOR times it)", async () => {
    const { s, asked } = session([{ status: "timeout" }]);
    await s.wait("r1", 2_000);
    expect(asked[0]).toBeGreaterThanOrEqual(2_000);
    expect(asked[0]).toBeLessThanOrEqual(2_000 * MAX_FACTOR);
  });

  it("an error ends it at once", async () => {
    const { s } = session([{ status: "error", error: "boom" }]);
    expect(await s.waitEnd("r1", 5_000)).toMatchObject({ status: "error", waits: 1 });
  });

  it("a run still pending at the deadline comes back pending, never as an end", async () => {
    const { s } = session([{ status: "pending" }]);
    const end = await s.waitEnd("r1", 300);
    expect(end.status).toBe("pending");
    expect(end.ms).toBeGreaterThanOrEqual(300);
  });
});
