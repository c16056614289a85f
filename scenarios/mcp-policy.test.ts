import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./mcp-policy.ts";
import { deriveChecks, emptyHistory, judgeHistory } from "../lab/judge/history.ts";

type Lowered = NonNullable<Observed["lowered"]>;
type Parked = NonNullable<Observed["permissionMode"]>;
type FromWorkspace = NonNullable<Observed["untrustedPlace"]>["labLayout"];
const TOOLS = ["north__example_echo", "south__example_echo", "north__write_file"];
const results = [
  { tool: "north__example_echo", isError: false, text: "north echoed: from north" },
  { tool: "south__example_echo", isError: false, text: "south echoed: from south" },
  { tool: "north__write_file", isError: false, text: "north wrote 15 bytes to multi-proof.txt" },
];
const lowered = (more: Partial<Lowered> = {}): Lowered => ({
  grantExitCode: 0,
  offeredToModel: [...TOOLS].sort(),
  approvals: TOOLS.map((tool, i) => ({ tool, serverCallsBeforeAnswer: i, answer: "applied" })),
  approvalIds: ["plugin:a1", "plugin:a2", "plugin:a3"],
  approvalRequests: 3,
  run: "ok",
  // As read from the two servers (north's first): the check orders them by the servers' time.
  serverCalls: [
    { server: "north", tool: "example_echo", time: "2026-12-04T00:00:01.000Z" },
    { server: "north", tool: "write_file", time: "2026-12-04T00:00:03.000Z" },
    { server: "south", tool: "example_echo", time: "2026-12-04T00:00:02.000Z" },
  ],
  results,
  ...more,
});
/** What 2026.9.6 showed under each change (R-mcp-policy-changed-parked's signature, as observed). */
const policyFile: Parked = {
  change: 'tool-policy.json = {"deny":["north__*"]}',
  reload: { verdict: "applied", detail: "tools.alsoAllow, tools.deny" },
  approvalBeforeAnswer: "pending",
  answer: "applied",
  approvalAfter: "allowed (user)",
  serverCalls: 1,
  run: "ok",
  toolResult: { isError: false, text: "north echoed: parked under policy change" },
  askedAgainAfterChange: 0,
};
const gateConfig: Parked = {
  change: "plugins.entries.fleetlab-approval-gate.config.allowedDecisions = [deny]",
  reload: { verdict: "failed", detail: "PluginRuntimeApplicationError: Plugin operation failed during prepare: Plugin fleetlab-approval-gate still has active retained work; retry after the work finishes." },
  approvalBeforeAnswer: "pending",
  answer: "applied",
  approvalAfter: "allowed (user)",
  serverCalls: 1,
  run: "ok",
  toolResult: { isError: false, text: "south echoed: parked under gate change" },
  askedAgainAfterChange: 0,
};
/** The permission mode change: the approval cancelled with the run, the answer refused, nothing ran (pass on 2026.9.6). */
const permission: Parked = {
  change: "sessions.patch permissionMode read-only",
  reload: null,
  approvalBeforeAnswer: "cancelled",
  answer: "INVALID_REQUEST: unknown or expired approval id",
  approvalAfter: "cancelled (run-aborted)",
  serverCalls: 0,
  run: "aborted",
  toolResult: null,
  askedAgainAfterChange: 0,
};
const refusedUnrun = (p: Parked): Parked => ({ ...p, answer: "INVALID_REQUEST: unknown or expired approval id", approvalAfter: "cancelled (policy-changed)", serverCalls: 0, run: "error", toolResult: null });
const POLICY_BYTES = '{"alsoAllow":["north__write_file"]}\n';
const labLayout: FromWorkspace = {
  agent: "main",
  workspace: "/home/lab/workspace",
  includePath: "/home/lab/workspace/same-policy.json",
  onDisk: { exitCode: 0, stdout: POLICY_BYTES },
  reload: { verdict: "refused", detail: "invalid config: : Include path escapes config directory: /home/lab/workspace/same-policy.json (root: /home/lab/.openclaw)" },
  policyInEffect: false,
};
const defaultLayout: FromWorkspace = {
  agent: "dflt",
  workspace: "/home/lab/.openclaw/workspace",
  includePath: "./workspace/same-policy.json",
  onDisk: { exitCode: 0, stdout: POLICY_BYTES },
  reload: { verdict: "applied", detail: "tools.alsoAllow, tools.deny" },
  policyInEffect: true,
};
const seen: Observed = {
  lowered: lowered(),
  changed: { toolPolicyFile: policyFile, approvalPluginConfig: gateConfig, newTurnOffersNorth: false },
  permissionMode: permission,
  untrustedPlace: { labLayout, openclawDefaultLayout: defaultLayout },
};
const judged = (o: Observed) => Object.fromEntries(deriveChecks(scenario.checks!, { ...o }, true).checks.map((c) => [c.id, c]));
const history = (o: Observed) => ({ ...emptyHistory("mcp-policy", "2026.9.6", { own: [], labWide: [] }), bodyReturned: true, observations: { ...o } });

describe("mcp-policy's checks over what its body observed", () => {
  it("the checks in the body's order", () => {
    expect(Object.keys(judged(seen))).toEqual(["R-mcp-policy-lowered-still-asks", "R-mcp-policy-changed-parked", "R-mcp-policy-changed-permission-mode", "R-mcp-policy-untrusted-place"]);
  });

  it("lowered-still-asks: three calls, three approvals, each call after its own answer: holds, the calls in the servers' time order", () => {
    expect(judged({ lowered: lowered() })["R-mcp-policy-lowered-still-asks"]).toEqual({
      id: "R-mcp-policy-lowered-still-asks",
      expectation: "a host tool policy that lowers a tool never silences its approval: the call still asks the operator, and every one of the turn's three tool calls needs its own approval",
      holds: true,
      observed: {
        mcpToolGrantSet: true,
        offeredToModel: [...TOOLS].sort(),
        approvals: TOOLS.map((tool, i) => ({ tool, serverCallsBeforeAnswer: i, answer: "applied" })),
        watchedBeforeAnswer_ms: 1_000,
        distinctApprovals: 3,
        unaskedApprovalRequests: 0,
        run: "ok",
        serverCalls: ["north:example_echo", "south:example_echo", "north:write_file"],
        results,
      },
    });
  });

  it("lowered-still-asks: one approval answering two calls, a call before its answer, an approval nobody answered: short", () => {
    const reused = judged({ lowered: lowered({ approvalIds: ["plugin:a1", "plugin:a1", "plugin:a3"] }) })["R-mcp-policy-lowered-still-asks"]!;
    expect(reused.holds).toBe(false);
    expect(reused.observed).toEqual({
      mcpToolGrantSet: true,
      offeredToModel: [...TOOLS].sort(),
      approvals: TOOLS.map((tool, i) => ({ tool, serverCallsBeforeAnswer: i, answer: "applied" })),
      watchedBeforeAnswer_ms: 1_000,
      distinctApprovals: 2,
      unaskedApprovalRequests: 0,
      run: "ok",
      serverCalls: ["north:example_echo", "south:example_echo", "north:write_file"],
      results,
    });
    const early = lowered({ approvals: TOOLS.map((tool) => ({ tool, serverCallsBeforeAnswer: 1, answer: "applied" })) });
    expect(judged({ lowered: early })["R-mcp-policy-lowered-still-asks"]!.holds).toBe(false);
    expect(judged({ lowered: lowered({ approvalRequests: 4 }) })["R-mcp-policy-lowered-still-asks"]).toMatchObject({ holds: false, observed: { unaskedApprovalRequests: 1 } });
    const silenced = lowered({ approvals: TOOLS.slice(0, 2).map((tool, i) => ({ tool, serverCallsBeforeAnswer: i, answer: "applied" })), approvalIds: ["plugin:a1", "plugin:a2"], approvalRequests: 2 });
    expect(judged({ lowered: silenced })["R-mcp-policy-lowered-still-asks"]).toMatchObject({ holds: false, observed: { distinctApprovals: 2, unaskedApprovalRequests: 0 } });
  });

  it("changed-parked: both answers refused and nothing at the servers: holds, with each change as judged", () => {
    const c = judged({ changed: { toolPolicyFile: refusedUnrun(policyFile), approvalPluginConfig: refusedUnrun(gateConfig), newTurnOffersNorth: false } })["R-mcp-policy-changed-parked"]!;
    expect(c.holds).toBe(true);
    const refusal = { approvalBeforeAnswer: "pending", answer: "INVALID_REQUEST: unknown or expired approval id", approvalAfter: "cancelled (policy-changed)", serverSawCall: false, run: "error", toolResult: null, askedAgainAfterChange: 0 };
    expect(c.observed).toEqual({
      toolPolicyFile: { change: 'tool-policy.json = {"deny":["north__*"]}', reload: { verdict: "applied", detail: "tools.alsoAllow, tools.deny" }, ...refusal, newTurnOffersNorth: false },
      approvalPluginConfig: { change: "plugins.entries.fleetlab-approval-gate.config.allowedDecisions = [deny]", reload: gateConfig.reload, ...refusal },
    });
  });

  it("changed-parked: one change whose parked call still ran is short", () => {
    const c = judged({ changed: { toolPolicyFile: refusedUnrun(policyFile), approvalPluginConfig: gateConfig, newTurnOffersNorth: false } })["R-mcp-policy-changed-parked"]!;
    expect(c.holds).toBe(false);
    expect(c.observed).toEqual({
      toolPolicyFile: { change: 'tool-policy.json = {"deny":["north__*"]}', reload: { verdict: "applied", detail: "tools.alsoAllow, tools.deny" }, approvalBeforeAnswer: "pending", answer: "INVALID_REQUEST: unknown or expired approval id", approvalAfter: "cancelled (policy-changed)", serverSawCall: false, run: "error", toolResult: null, askedAgainAfterChange: 0, newTurnOffersNorth: false },
      approvalPluginConfig: { change: gateConfig.change, reload: gateConfig.reload, approvalBeforeAnswer: "pending", answer: "applied", approvalAfter: "allowed (user)", serverSawCall: true, run: "ok", toolResult: { isError: false, text: "south echoed: parked under gate change" }, askedAgainAfterChange: 0 },
    });
  });

  it("changed-permission-mode: cancelled with the run and refused: holds; applied and run: short", () => {
    expect(judged({ permissionMode: permission })["R-mcp-policy-changed-permission-mode"]).toEqual({
      id: "R-mcp-policy-changed-permission-mode",
      expectation: "the session's permission mode changed while an approval is parked: answering that approval is refused and nothing runs (OpenClaw: pending approvals from the old permissions are cancelled)",
      holds: true,
      observed: {
        change: "sessions.patch permissionMode read-only",
        reload: null,
        approvalBeforeAnswer: "cancelled",
        answer: "INVALID_REQUEST: unknown or expired approval id",
        approvalAfter: "cancelled (run-aborted)",
        serverSawCall: false,
        run: "aborted",
        toolResult: null,
        askedAgainAfterChange: 0,
      },
    });
    const ran = { ...permission, approvalBeforeAnswer: "pending", answer: "applied", approvalAfter: "allowed (user)", serverCalls: 1, run: "ok" };
    expect(judged({ permissionMode: ran })["R-mcp-policy-changed-permission-mode"]!.holds).toBe(false);
    expect(judged({ permissionMode: ran })["R-mcp-policy-changed-permission-mode"]!.observed).toEqual({
      change: "sessions.patch permissionMode read-only",
      reload: null,
      approvalBeforeAnswer: "pending",
      answer: "applied",
      approvalAfter: "allowed (user)",
      serverSawCall: true,
      run: "ok",
      toolResult: null,
      askedAgainAfterChange: 0,
    });
  });

  it("untrusted-place: both includes refused: holds; a file that is not the bytes the agent was told to write is not 'agentWroteIt'", () => {
    const refused = { ...defaultLayout, reload: { verdict: "refused", detail: "x" }, policyInEffect: false };
    const c = judged({ untrustedPlace: { labLayout, openclawDefaultLayout: refused } })["R-mcp-policy-untrusted-place"]!;
    expect(c).toMatchObject({ holds: true, observed: { labLayout: { agentWroteIt: true }, openclawDefaultLayout: { agentWroteIt: true, policyInEffect: false } } });
    const other = { ...labLayout, onDisk: { exitCode: 0, stdout: '{"alsoAllow":[]}\n' } };
    expect(judged({ untrustedPlace: { labLayout: other, openclawDefaultLayout: refused } })["R-mcp-policy-untrusted-place"]).toMatchObject({ holds: false, observed: { labLayout: { agentWroteIt: false } } });
    const missing = { ...labLayout, onDisk: { exitCode: 1, stdout: "" } };
    expect(judged({ untrustedPlace: { labLayout: missing, openclawDefaultLayout: refused } })["R-mcp-policy-untrusted-place"]!.holds).toBe(false);
  });

  it("the registered signatures (a change under a parked approval; the default layout's agent-written policy admitted) read known-finding", () => {
    const c = judged(seen);
    expect(c["R-mcp-policy-untrusted-place"]!.observed).toEqual({
      labLayout: { agent: "main", workspace: "/home/lab/workspace", includePath: "/home/lab/workspace/same-policy.json", agentWroteIt: true, reload: labLayout.reload, policyInEffect: false },
      openclawDefaultLayout: { agent: "dflt", workspace: "/home/lab/.openclaw/workspace", includePath: "./workspace/same-policy.json", agentWroteIt: true, reload: defaultLayout.reload, policyInEffect: true },
    });
    const j = judgeHistory(history(seen), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-mcp-policy-changed-parked, known-finding R-mcp-policy-untrusted-place"]);
  });

  it("a body that returned before part 4: unknown", () => {
    const { untrustedPlace: _u, ...early } = seen;
    void _u;
    expect(judgeHistory(history(early), scenario, []).verdict).toBe("unknown");
  });
});

