import { describe, expect, it } from "vitest";
import { historyDiff, historyLines, type HistoryMessage } from "./sessions.ts";

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
