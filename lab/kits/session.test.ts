import { describe, expect, it } from "vitest";
import type { GatewayClient } from "../clients/gateway.ts";
import { replyOf } from "./session.ts";
import { LabInfraError } from "../definitions/verdict.ts";

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
