import { describe, expect, it } from "vitest";
import { chatTurn, historyDiff, historyLines, waitRun, type HistoryMessage } from "./sessions.ts";
import type { GatewayClient } from "./gateway.ts";
import { MAX_FACTOR } from "../core/pace.ts";

describe("historyLines", () => {
  it("one line per message: role, text, and each tool call with its arguments", () => {
    const history: HistoryMessage[] = [
      { role: "user", content: "run both checkpoints" },
      { role: "assistant", content: [{ type: "text", text: "reading " }, { type: "toolCall", name: "read", arguments: { path: "checkpoint-1.txt" } }] },
      { role: "toolResult", content: [{ type: "text", text: "CHECKPOINT-1" }], toolName: "read" },
    ];
    expect(historyLines(history)).toEqual(["user: run both checkpoints", 'assistant: reading  [toolCall read {"path":"checkpoint-1.txt"}]', "toolResult: CHECKPOINT-1"]);
  });
});

describe("historyDiff", () => {
  it("equal histories", () => {
    expect(historyDiff(["a", "b"], ["a", "b"])).toEqual({ equal: true, removed: [], added: [] });
  });
  it("the lines after the common prefix on each side", () => {
    expect(historyDiff(["a", "b", "c"], ["a", "x"])).toEqual({ equal: false, removed: ["b", "c"], added: ["x"] });
    expect(historyDiff(["a"], ["a", "partial"])).toEqual({ equal: false, removed: [], added: ["partial"] });
  });
});

describe("waitRun / chatTurn: agent.wait's bound, counted by the gateway in wall time", () => {
  /** A client whose agent.wait answers `status`, recording the bound it was handed and the socket's options. */
  function client(status = "timeout") {
    const asked: { timeoutMs: number; socket: { timeoutMs?: number; expectation?: boolean } }[] = [];
    const request = async (method: string, params: { timeoutMs?: number }, opts: { timeoutMs?: number; expectation?: boolean } = {}) => {
      if (method === "chat.send") return { runId: "r1", status: "started" };
      asked.push({ timeoutMs: params.timeoutMs ?? -1, socket: opts });
      return { runId: "r1", status };
    };
    return { c: { request } as unknown as GatewayClient, asked };
  }

  it("an expectation is handed as it is; the socket waits 5 s past it, fixed", async () => {
    const { c, asked } = client();
    expect((await waitRun(c, "r1", 500, { expectation: true })).status).toBe("timeout");
    expect(asked).toEqual([{ timeoutMs: 500, socket: { timeoutMs: 5_500, expectation: true } }]);
  });

  it("the lab's own wait is handed at the machine's pace (at least the figure, at most MAX_FACTOR times it)", async () => {
    const { c, asked } = client();
    await waitRun(c, "r1", 2_000);
    expect(asked[0]!.timeoutMs).toBeGreaterThanOrEqual(2_000);
    expect(asked[0]!.timeoutMs).toBeLessThanOrEqual(2_000 * MAX_FACTOR);
    expect(asked[0]!.socket).toEqual({ timeoutMs: asked[0]!.timeoutMs + 5_000, expectation: true });
  });

  it("chatTurn hands agent.wait what is left of the turn's budget", async () => {
    const { c, asked } = client("timeout");
    await expect(chatTurn(c, "s", "hello", { timeoutMs: 3_000, expectation: true })).rejects.toThrow(/ended with status timeout after \d+ ms/);
    expect(asked[0]!.timeoutMs).toBeGreaterThan(0);
    expect(asked[0]!.timeoutMs).toBeLessThanOrEqual(3_000);
  });
});
