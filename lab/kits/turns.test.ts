import { describe, expect, it } from "vitest";
import type { HistoryMessage } from "../clients/sessions.ts";
import { turnView } from "./turns.ts";

const msg = (role: string, text: string, runId?: string, extra: Record<string, unknown> = {}): HistoryMessage =>
  ({ role, content: [{ type: "text", text }], ...(runId ? { __openclaw: { runId } } : {}), ...extra }) as unknown as HistoryMessage;

describe("turnView: one run's results and model requests", () => {
  it("keeps this run's tool results and replies only, and the model requests carrying its token", () => {
    const history = [
      msg("user", "tok-1 go", "r1"),
      msg("toolResult", "north echoed: a", "r1", { toolName: "north__example_echo", toolCallId: "c1" }),
      msg("assistant", "done a", "r1"),
      msg("toolResult", "south echoed: b", "r2", { toolName: "south__example_echo", toolCallId: "c2", isError: true }),
      msg("assistant", "untagged"),
    ];
    const requests = [
      { id: "m1", seq: 1, status: "completed", userText: "tok-1 go", round: 0, toolNames: ["north__example_echo"], output: [] },
      { id: "m2", seq: 2, status: "completed", userText: "tok-2 other", output: [] },
      { id: "m3", seq: 3, status: "held", userText: "tok-1 go", round: 1, output: [] },
    ];
    const v = turnView("r1", "tok-1", history, requests);
    expect(v.toolResults).toEqual([{ toolName: "north__example_echo", toolCallId: "c1", isError: false, text: "north echoed: a" }]);
    expect(v.replies).toEqual(["done a"]);
    expect(v.modelRequests.map((r) => [r.id, r.status, r.round])).toEqual([
      ["m1", "completed", 0],
      ["m3", "held", 1],
    ]);
  });
});
