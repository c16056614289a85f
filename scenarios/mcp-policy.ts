import { defineScenario, type FindingRecord } from "../lab/scenario.ts";
import { waitRun, chatHistory } from "../lab/clients/sessions.ts";
import type { GatewayClient } from "../lab/clients/gateway.ts";
import { newSessionKey } from "../lab/clients/operator.ts";
import { writeJson } from "../lab/evidence/write.ts";
import { approvalState, resolveApproval, waitApproval } from "../lab/kits/approvals.ts";
import { EventLog } from "../lab/kits/events.ts";
import { editGatewayConfig, gatewayLog, setApprovalsDocument, waitReload, writeToolPolicy } from "../lab/kits/gateway-config.ts";
import { mcpToolsOffered, toolCallsIn } from "../lab/kits/mcp.ts";
import { mcpScene } from "../lab/kits/scene.ts";
import { sendTurn, toolErrorMessage, toolResults, type Turn } from "../lab/kits/turns.ts";
import { AGENT_WORKSPACE, APPROVAL_PLUGIN, TOOL_POLICY_FILE, toolPolicyBytes } from "../lab/members/gateway.ts";
import type { Lab } from "../lab/topology/lab.ts";
import { WaitTimeout, pollUntil, waitFor } from "../lab/core/wait.ts";

// The multi-MCP reference's host tool policy (points 1, 2 and 4), mapped onto OpenClaw.
// Reference: two MCP servers (north, south), a host tool policy file, every MCP call asks the
// operator; the policy file overrides north's `write_file` from its own category to "read".
//
// What that is in OpenClaw. OpenClaw has no per-tool risk category: nothing outside Codex runs
// reads MCP annotations (dist/mcp-codex-tool-approval-*.mjs is the only reader of readOnlyHint)
// and nothing gates MCP calls by itself (scenarios/mcp-readonly-hint.ts). Its host-side policy
// surfaces for MCP tools are:
//  - the tool policy, `tools.allow` / `alsoAllow` / `deny` (docs/gateway/config-tools/tool-policy.md,
//    docs/tools/index.md "Configure access and approvals"), here in a file of its own, the host
//    tool policy file (spec `gateway.toolPolicy`): /etc/fleetlab/policy/tool-policy.json,
//    root-owned, admitted as an include root (OPENCLAW_INCLUDE_ROOTS) and included by the
//    gateway config as `tools.$include` (docs/gateway/config-secrets-env.md "$include");
//  - the approvals document's MCP tool grant, `agents.<id>.mcpTools`, the durable "allow always"
//    for one server + tool (docs/tools/exec-approvals.md "MCP tool grants"), written with
//    `openclaw approvals set`; only Codex runs read it (dist/exec-approvals-mcp-*.mjs, imported
//    by bundle-mcp-codex, codex-mcp-config and native-hook-relay only);
//  - the approval plugin's config (plugins.entries.fleetlab-approval-gate.config), which parks
//    every north and south tool here (mcp.approvalTools ["north__*", "south__*"]: the reference's
//    "ask" mode);
//  - the session's permission mode (sessions.patch permissionMode; docs/gateway/permission-modes.md).
// Edits of the config file or of an included file are picked up by the gateway's config watcher
// (dist/server-reload-managed-*.mjs); the scenario waits for its outcome line: "config hot reload
// applied (<paths>)", "config reload skipped (invalid config): <why>" or "config reload failed:
// <why>" (docs/gateway/configuration/hot-reload.md: `tools`, `plugins.entries.*` and `agents`
// apply without a restart).
//
// Checks (reference point -> OpenClaw; verdict on 2026.9.6):
//  1. R-mcp-policy-lowered-still-asks (pass): "a host tool policy that lowers a tool never
//     silences its approval: the call still asks the operator, and every one of the turn's three
//     tool calls needs its own approval". The policy file allows north__write_file explicitly
//     (`tools.alsoAllow`) and the approvals document grants north/write_file "allow always"; one
//     turn calls north__example_echo, south__example_echo, north__write_file. Each parks with its
//     own approval, reaches its server only after its own allow-once, and the turn completes
//     with each server's result.
//  2. R-mcp-policy-changed-parked (differs from reference): "the host policy changed while an
//     approval is parked (the tool policy file; the approval plugin's config): answering that
//     approval is refused and nothing runs". Two changes, each under its own parked call, each
//     waited for until the watcher's outcome:
//     - toolPolicyFile: the policy file now denies north's tools (`tools.deny: ["north__*"]`)
//       while north__example_echo (the reference's first parked call) is parked: hot-applied,
//       yet allow-once is accepted and the parked call runs;
//     - approvalPluginConfig: the gate's config now offers only "deny" (allowedDecisions) while
//       south__example_echo is parked: OpenClaw does not apply it while the plugin has the
//       parked call (reload failed: "still has active retained work"), and the call runs.
//     R-mcp-policy-changed-permission-mode (pass): the same expectation for the one surface
//     OpenClaw documents as cancelling pending approvals when it changes ("Pending approvals
//     from the old permissions are canceled, not granted", docs/gateway/permission-modes.md):
//     the session's permission mode set to read-only while south__example_echo is parked; the
//     run's attempt is aborted (dist/permission-change-*.mjs), the approval is cancelled
//     (run-aborted) and allow-once is refused.
//  4. R-mcp-policy-untrusted-place (differs from reference): "the same policy bytes, loaded from
//     a file inside the agent's writable workspace, are refused, so the agent cannot write its
//     own policy". The agent itself writes the original policy bytes into its workspace with its
//     `write` tool; the live config is then pointed at that file (`tools.$include`): once for the
//     main agent (workspace /home/lab/workspace, outside the config directory /home/lab/.openclaw:
//     refused, "Include path escapes config directory") and once for an agent with OpenClaw's
//     default workspace ~/.openclaw/workspace (docs/concepts/agent-workspace.md), inside the
//     config directory: admitted, and the agent-written policy replaces the trusted one (north's
//     tools, denied by check 2's change, are offered again). OpenClaw's include boundary is the
//     config directory plus OPENCLAW_INCLUDE_ROOTS (dist/includes-*.mjs); nothing in dist/
//     refuses a policy or plugin path for being inside an agent workspace (looked at the include
//     resolver and plugin discovery: dist/native-hook-relay/call-*.mjs discoverOpenClawPlugins
//     makes configured load paths origin "config" wherever they are; auto-discovered
//     <workspace>/.openclaw/extensions plugins are disabled unless allowlisted,
//     dist/config-normalization-shared-*.mjs "workspace-disabled-by-default").
// Points 3 and 5 (restart under a changed policy; durable approvals) are in
// scenarios/mcp-approval-restart.ts, on the same policy file.
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): each approval's wait
// (a time-out is "not asked"), the 20 s window a re-ask after a change is counted in, the 10 s for
// a probe's model request, the config watcher's window (waitReload).
//
// Registered findings: what OpenClaw was seen to do short of this scenario's expectations
// (judged by lab/findings/findings.ts). Add one only with its exact signature and the run
// folder that showed it.
const findings: FindingRecord[] = [
  {
    // Neither change touches the parked approval. The tool policy change is hot-applied (new
    // turns no longer see north's tools) and the parked north__example_echo still runs on
    // allow-once. The gate's config change is not applied at all while the gate has a parked
    // approval (the reload fails: "still has active retained work"), and the parked call
    // runs under the old config.
    id: "R-mcp-policy-changed-parked",
    expectation: "the host policy changed while an approval is parked (the tool policy file; the approval plugin's config): answering that approval is refused and nothing runs",
    signature: {
      toolPolicyFile: {
        change: 'tool-policy.json = {"deny":["north__*"]}',
        reload: { verdict: "applied", detail: "tools.alsoAllow, tools.deny" },
        approvalBeforeAnswer: "pending",
        answer: "applied",
        approvalAfter: "allowed (user)",
        serverSawCall: true,
        run: "ok",
        toolResult: { isError: false, text: "north echoed: parked under policy change" },
        askedAgainAfterChange: 0,
        newTurnOffersNorth: false,
      },
      approvalPluginConfig: {
        change: "plugins.entries.fleetlab-approval-gate.config.allowedDecisions = [deny]",
        reload: { verdict: "failed", detail: "PluginRuntimeApplicationError: Plugin operation failed during prepare: Plugin fleetlab-approval-gate still has active retained work; retry after the work finishes." },
        approvalBeforeAnswer: "pending",
        answer: "applied",
        approvalAfter: "allowed (user)",
        serverSawCall: true,
        run: "ok",
        toolResult: { isError: false, text: "south echoed: parked under gate change" },
        askedAgainAfterChange: 0,
      },
    },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/R-mcp-policy-changed-parked.json",
  },
  {
    // OpenClaw's include boundary is the config directory (plus OPENCLAW_INCLUDE_ROOTS), not the
    // agent's workspace: with the workspace outside it the include is refused, but with
    // OpenClaw's own default layout (~/.openclaw/workspace) the file the agent wrote is admitted
    // and its policy replaces the trusted one (north's tools offered again).
    id: "R-mcp-policy-untrusted-place",
    expectation: "the same policy bytes, loaded from a file inside the agent's writable workspace, are refused, so the agent cannot write its own policy",
    signature: {
      labLayout: {
        agent: "main",
        workspace: "/home/lab/workspace",
        includePath: "/home/lab/workspace/same-policy.json",
        agentWroteIt: true,
        reload: { verdict: "refused", detail: "invalid config: : Include path escapes config directory: /home/lab/workspace/same-policy.json (root: /home/lab/.openclaw)" },
        policyInEffect: false,
      },
      openclawDefaultLayout: {
        agent: "dflt",
        workspace: "/home/lab/.openclaw/workspace",
        includePath: "./workspace/same-policy.json",
        agentWroteIt: true,
        reload: { verdict: "applied", detail: "tools.alsoAllow, tools.deny" },
        policyInEffect: true,
      },
    },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/R-mcp-policy-untrusted-place.json",
  },
];

/** The original host policy: north's own write tool explicitly allowed (the reference's "read" override). */
const POLICY = { alsoAllow: ["north__write_file"] };
/** The changed policy of check 2: north's tools denied (the reference changes the override to "execute"). */
const CHANGED_POLICY = { deny: ["north__*"] };
const THREE = "fleetlab-policy-three";
/** Where OpenClaw keeps an agent's workspace by default (~/.openclaw/workspace): inside its config directory. */
const DEFAULT_LAYOUT_WORKSPACE = "/home/lab/.openclaw/workspace";
const DEFAULT_LAYOUT_AGENT = "dflt";

/** How long each parked call of the three-call turn is watched for a call reaching its server before it is answered (in the observed). */
const ASKED_WATCH_MS = 1_000;
// The body drives and observes (ctx.observe); the checks below judge what it observed.

/** The three-call turn: the grant's exit code, what the model was offered, each approval as answered, the ids asked, every approval request of the turn, the run, the calls at the servers, the results. */
interface Lowered {
  grantExitCode: number;
  offeredToModel: string[] | null;
  approvals: { tool: string | null; serverCallsBeforeAnswer: number; answer: string }[];
  /** The id of each approval answered, in order. */
  approvalIds: string[];
  /** How many approval requests the turn raised in all. */
  approvalRequests: number;
  run: string;
  serverCalls: { server: string; tool: string | null | undefined; time: string }[];
  results: { tool: string; isError: boolean; text: string }[];
}
/** One call parked under a change: the change, the watcher's outcome, the approval before and after the answer, the answer, the calls at its server, the run, its result, re-asks. */
interface ParkedChange {
  change: string;
  reload: { verdict: string; detail: string } | null;
  approvalBeforeAnswer: string;
  answer: string;
  approvalAfter: string;
  /** tools/call at the call's server from the park on. */
  serverCalls: number;
  run: string;
  toolResult: { isError: boolean; text: string } | null;
  askedAgainAfterChange: number;
}
/** The policy bytes the agent wrote into a workspace, pointed at by the live config: the file as read back, the watcher's outcome, north offered again. */
interface FromWorkspace {
  agent: string;
  workspace: string;
  includePath: string;
  onDisk: { exitCode: number; stdout: string };
  reload: { verdict: string; detail: string };
  policyInEffect: boolean | null;
}
export interface Observed {
  lowered?: Lowered;
  changed?: { toolPolicyFile: ParkedChange; approvalPluginConfig: ParkedChange; newTurnOffersNorth: boolean | null };
  permissionMode?: ParkedChange;
  untrustedPlace?: { labLayout: FromWorkspace; openclawDefaultLayout: FromWorkspace };
}

const EXPECTED_TOOLS = ["north__example_echo", "south__example_echo", "north__write_file"];

/** The three-call turn as judged: the grant set, distinct approvals, approval requests nobody answered, the calls in the servers' time order. */
function loweredView(l: Lowered) {
  return {
    mcpToolGrantSet: l.grantExitCode === 0,
    offeredToModel: l.offeredToModel,
    approvals: l.approvals,
    // How long each parked call was watched for a call reaching its server before its answer.
    watchedBeforeAnswer_ms: ASKED_WATCH_MS,
    distinctApprovals: new Set(l.approvalIds).size,
    unaskedApprovalRequests: l.approvalRequests - l.approvals.length,
    run: l.run,
    serverCalls: [...l.serverCalls].sort((a, b) => a.time.localeCompare(b.time)).map((c) => `${c.server}:${c.tool}`),
    results: l.results,
  };
}

/** A parked call under a change as judged: did its server see a call. */
function parkedView(p: ParkedChange) {
  return {
    change: p.change,
    reload: p.reload,
    approvalBeforeAnswer: p.approvalBeforeAnswer,
    answer: p.answer,
    approvalAfter: p.approvalAfter,
    serverSawCall: p.serverCalls > 0,
    run: p.run,
    toolResult: p.toolResult,
    askedAgainAfterChange: p.askedAgainAfterChange,
  };
}
/** Refused and nothing ran. */
const refusedUnrun = (v: ReturnType<typeof parkedView>) => v.answer !== "applied" && !v.serverSawCall;

/** A workspace policy as judged: did the agent write the original policy bytes there. */
function workspaceView(w: FromWorkspace) {
  return {
    agent: w.agent,
    workspace: w.workspace,
    includePath: w.includePath,
    agentWroteIt: w.onDisk.exitCode === 0 && w.onDisk.stdout === toolPolicyBytes(POLICY),
    reload: w.reload,
    policyInEffect: w.policyInEffect,
  };
}

export default defineScenario<Observed>({
  name: "mcp-policy",
  proves: "a host tool policy that lowers an MCP tool never silences its approval (three calls, three approvals); a policy changed under a parked approval, and a policy loaded from the agent's workspace, against the reference",
  topology: "own",
  spec: {
    nodes: { count: 0 },
    git: { enabled: false },
    gateway: { toolPolicy: POLICY },
    mcp: {
      servers: [
        { name: "north", catalog: "north-write", port: 8080 },
        { name: "south", catalog: "south", port: 8080 },
      ],
      approvalTools: ["north__*", "south__*"],
    },
  },
  findings,
  timeoutMs: 420_000,
  checks: [
    {
      id: "R-mcp-policy-lowered-still-asks",
      expectation: "a host tool policy that lowers a tool never silences its approval: the call still asks the operator, and every one of the turn's three tool calls needs its own approval",
      judge: (h) => {
        if (!h.lowered) return undefined;
        const part1 = loweredView(h.lowered);
        const steps = part1.approvals;
        const holds =
          part1.mcpToolGrantSet &&
          steps.length === 3 &&
          steps.every((s, i) => s.tool === EXPECTED_TOOLS[i] && s.serverCallsBeforeAnswer === i && s.answer === "applied") &&
          part1.distinctApprovals === 3 &&
          part1.unaskedApprovalRequests === 0 &&
          part1.run === "ok" &&
          part1.serverCalls.join(",") === "north:example_echo,south:example_echo,north:write_file" &&
          part1.results.map((r) => r.text).join("|") === "north echoed: from north|south echoed: from south|north wrote 15 bytes to multi-proof.txt";
        return { holds, observed: part1 };
      },
    },
    {
      id: "R-mcp-policy-changed-parked",
      expectation: "the host policy changed while an approval is parked (the tool policy file; the approval plugin's config): answering that approval is refused and nothing runs",
      judge: (h) => {
        if (!h.changed) return undefined;
        const toolPolicyFile = parkedView(h.changed.toolPolicyFile);
        const approvalPluginConfig = parkedView(h.changed.approvalPluginConfig);
        return {
          holds: [toolPolicyFile, approvalPluginConfig].every(refusedUnrun),
          observed: { toolPolicyFile: { ...toolPolicyFile, newTurnOffersNorth: h.changed.newTurnOffersNorth }, approvalPluginConfig },
        };
      },
    },
    {
      id: "R-mcp-policy-changed-permission-mode",
      expectation: "the session's permission mode changed while an approval is parked: answering that approval is refused and nothing runs (OpenClaw: pending approvals from the old permissions are cancelled)",
      judge: (h) => {
        if (!h.permissionMode) return undefined;
        const observed = parkedView(h.permissionMode);
        return { holds: refusedUnrun(observed), observed };
      },
    },
    {
      id: "R-mcp-policy-untrusted-place",
      expectation: "the same policy bytes, loaded from a file inside the agent's writable workspace, are refused, so the agent cannot write its own policy",
      judge: (h) => {
        if (!h.untrustedPlace) return undefined;
        const labLayout = workspaceView(h.untrustedPlace.labLayout);
        const openclawDefaultLayout = workspaceView(h.untrustedPlace.openclawDefaultLayout);
        return {
          holds: [labLayout, openclawDefaultLayout].every((v) => v.agentWroteIt && v.reload.verdict === "refused" && !v.policyInEffect),
          observed: { labLayout, openclawDefaultLayout },
        };
      },
    },
  ],
  async run(ctx) {
    const { lab, log, file, observe, signal } = ctx;
    const client = lab.operator.client;
    const north = lab.mcp("north");
    const south = lab.mcp("south");
    const serverCalls = async () => [...toolCallsIn(await north.requests()), ...toolCallsIn(await south.requests())];
    const atEnd = async () => {
      writeJson(file("gateway-config-reload-log.json"), await gatewayLog(lab).then((l) => l.filter((x) => /config|reload|include/i.test(x.line))).catch((e: Error) => ({ unreadable: e.message })));
    };
    await mcpScene(ctx, { atEnd }, async ({ events, extra }) => {
      await lab.model.setScript([
        {
          id: "three-calls",
          match: { contains: THREE },
          rounds: [
            [{ toolCall: { name: "north__example_echo", arguments: { text: "from north" } } }],
            [{ toolCall: { name: "south__example_echo", arguments: { text: "from south" } } }],
            [{ toolCall: { name: "north__write_file", arguments: { path: "multi-proof.txt", content: "Two MCP servers" } } }],
            [{ text: "fleetlab-ok: three calls: {{toolOutput}}" }],
          ],
        },
      ]);
      // --- 1. a lowered tool still asks; three calls, three approvals ---------------------------
      const grant = await setApprovalsDocument(lab, { version: 1, agents: { main: { mcpTools: [{ server: "north", tool: "write_file", source: "allow-always", addedAt: Date.now() }] } } });
      log(`approvals document with the north/write_file MCP grant: ${JSON.stringify(grant)}`);
      const turn = await sendTurn(client, THREE);
      const steps: Lowered["approvals"] = [];
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        // The first turn of a fresh gateway connects the MCP servers first (24 s seen on a loaded machine).
        // expectation: a time-out is "not asked" (unlessTimeout), judged by R-mcp-policy-lowered-still-asks: fixed, not paced
        const asked = await waitFor(`approval #${i + 1} of the three-call turn`, () => events.approvalRequests(turn.runId)[i], { timeoutMs: i === 0 ? 90_000 : 20_000, bound: "expectation", intervalMs: 50, signal }).catch(unlessTimeout);
        if (!asked) break;
        ids.push(asked.id);
        // A call that did not wait for its approval would reach its server meanwhile: watched for
        // ASKED_WATCH_MS (a call beyond the i already approved ends it at once; the bound is in
        // the observed), then counted again just before the answer.
        await pollUntil(`a call beyond the ${i} approved reaching north or south`, async () => (await serverCalls()).length, (n) => n > i, { deadlineMs: ASKED_WATCH_MS, intervalMs: 100, signal });
        const before = (await serverCalls()).length;
        const r = await resolveApproval(client, asked.id, "allow-once");
        steps.push({ tool: asked.request?.toolName ?? null, serverCallsBeforeAnswer: before, answer: r.ok ? "applied" : r.code });
      }
      const end = await waitRun(client, turn.runId, 30_000);
      const results = toolResults(await chatHistory(client, turn.sessionKey)).map((r) => ({ tool: r.toolName, isError: r.isError, text: r.isError ? toolErrorMessage(r.text) : r.text }));
      const offered = (await lab.model.requests()).find((r) => r.userText?.includes(THREE));
      const lowered: Lowered = {
        grantExitCode: grant.exitCode,
        offeredToModel: offered ? mcpToolsOffered(offered) : null,
        approvals: steps,
        approvalIds: ids,
        approvalRequests: events.approvalRequests(turn.runId).length,
        run: end.status,
        serverCalls: (await serverCalls()).map((c) => ({ server: c.server, tool: c.tool, time: c.time })),
        results,
      };
      const part1 = loweredView(lowered);
      log(`three calls: ${JSON.stringify(part1)}`);
      extra.lowered = { turn, grant, ...part1 };
      observe("lowered", lowered);

      // --- 2. the policy changed under a parked approval -----------------------------------------
      // The gate's own config first (it must be undone before the next one), then the policy file.
      const pluginConfig = await parkChangeAnswer(lab, events, 'fleetlab-call south__example_echo {"text":"parked under gate change"}', "south", signal, log, async () => {
        await editGatewayConfig(lab, (c) => {
          const entry = (c.plugins as { entries: Record<string, { config: Record<string, unknown> }> }).entries[APPROVAL_PLUGIN]!;
          entry.config.allowedDecisions = ["deny"];
        });
        return "plugins.entries.fleetlab-approval-gate.config.allowedDecisions = [deny]";
      });
      // Undo it in the file (later edits rewrite the file); the watcher has something to apply
      // only if the change itself was applied.
      const undone = Date.now();
      await editGatewayConfig(lab, (c) => {
        delete (c.plugins as { entries: Record<string, { config: Record<string, unknown> }> }).entries[APPROVAL_PLUGIN]!.config.allowedDecisions;
      });
      if (pluginConfig.seen.reload?.verdict === "applied") log(`gate config restored: ${JSON.stringify(await waitReload(lab, undone, { signal }))}`);
      const toolPolicyFile = await parkChangeAnswer(lab, events, 'fleetlab-call north__example_echo {"text":"parked under policy change"}', "north", signal, log, async () => {
        await writeToolPolicy(lab, CHANGED_POLICY);
        return `tool-policy.json = ${JSON.stringify(CHANGED_POLICY)}`;
      });
      const northAfter = await northOffered(lab, client, "after-policy-change", signal);
      extra.changed = { toolPolicyFile: parkedEvidence(toolPolicyFile), pluginConfig: parkedEvidence(pluginConfig), northAfter };
      observe("changed", { toolPolicyFile: toolPolicyFile.seen, approvalPluginConfig: pluginConfig.seen, newTurnOffersNorth: northAfter });

      const permission = await parkChangeAnswer(lab, events, 'fleetlab-call south__example_echo {"text":"parked under permission change"}', "south", signal, log, async (t) => {
        try {
          await client.request("sessions.patch", { key: t.sessionKey, permissionMode: "read-only" });
          return "sessions.patch permissionMode read-only";
        } catch (err) {
          return `sessions.patch refused: ${(err as { code?: string }).code ?? ""} ${(err as { gatewayMessage?: string }).gatewayMessage ?? (err as Error).message}`;
        }
      });
      extra.permissionMode = parkedEvidence(permission);
      observe("permissionMode", permission.seen);

      // --- 4. the same policy bytes from the agent's writable workspace ---------------------------
      const labLayout = await policyFromWorkspace(lab, client, "main", AGENT_WORKSPACE, `${AGENT_WORKSPACE}/same-policy.json`, signal, log);
      // OpenClaw's default layout: an agent whose workspace is ~/.openclaw/workspace, inside the
      // config directory. (Switching agents.defaults.workspace live is applied, but the running
      // main agent's file tools keep the workspace it started with: a new agent is configured.)
      const added = Date.now();
      await editGatewayConfig(lab, (c) => {
        (c.agents as Record<string, unknown>).list = [{ id: "main", default: true }, { id: DEFAULT_LAYOUT_AGENT, workspace: DEFAULT_LAYOUT_WORKSPACE }];
        (c.tools as Record<string, unknown>).$include = TOOL_POLICY_FILE;
      });
      const agentAdded = await waitReload(lab, added, { signal });
      log(`agent ${DEFAULT_LAYOUT_AGENT} (workspace ${DEFAULT_LAYOUT_WORKSPACE}) configured: ${JSON.stringify(agentAdded)}`);
      const defaultLayout = await policyFromWorkspace(lab, client, DEFAULT_LAYOUT_AGENT, DEFAULT_LAYOUT_WORKSPACE, "./workspace/same-policy.json", signal, log);
      extra.untrustedPlace = { labLayout: workspaceEvidence(labLayout), agentAdded, defaultLayout: workspaceEvidence(defaultLayout) };
      observe("untrustedPlace", { labLayout: labLayout.seen, openclawDefaultLayout: defaultLayout.seen });
    });
  },
});

/** A WaitTimeout becomes undefined (recorded as "not seen"); anything else is rethrown. */
function unlessTimeout(err: unknown): undefined {
  if (err instanceof WaitTimeout) return undefined;
  throw err;
}

/**
 * Parks one gated call, applies `change` while it is parked, waits until the gateway's config
 * watcher has seen the change (when it is a config change), answers allow-once and reports what
 * happened. Denies whatever the turn asks afterwards so it ends.
 */
async function parkChangeAnswer(lab: Lab, events: EventLog, message: string, server: "north" | "south", signal: AbortSignal, log: (m: string) => void, change: (turn: Turn) => Promise<string>): Promise<{ seen: ParkedChange; detail: Record<string, unknown> }> {
  const client = lab.operator.client;
  const mcp = lab.mcp(server);
  const turn = await sendTurn(client, message);
  const asked = await waitApproval(events, turn.runId, { signal });
  const since = await mcp.lastSeq();
  const changedAt = Date.now();
  const what = await change(turn);
  const reload = what.startsWith("sessions.patch") ? null : await waitReload(lab, changedAt, { signal });
  const before = await approvalState(client, asked.id);
  const answer = await resolveApproval(client, asked.id, "allow-once");
  // expectation: the 20 s window in which a re-ask after the change is counted (askedAgainAfterChange, in the signature): fixed
  const end = await waitRun(client, turn.runId, 20_000, { expectation: true });
  // Anything the turn asks after the change (a resumed attempt asking again) is denied.
  const later = events.approvalRequests(turn.runId).filter((a) => a.id !== asked.id);
  for (const a of later) await resolveApproval(client, a.id, "deny");
  const finalEnd = later.length ? await waitRun(client, turn.runId, 20_000) : end;
  const calls = toolCallsIn(await mcp.requests({ since }));
  const result = toolResults(await chatHistory(client, turn.sessionKey)).find((r) => r.toolCallId === asked.request?.toolCallId);
  const after = await approvalState(client, asked.id);
  const seen: ParkedChange = {
    change: what,
    reload: reload ? { verdict: reload.verdict, detail: reload.detail } : null,
    approvalBeforeAnswer: before.status,
    answer: answer.ok ? "applied" : `${answer.code}${answer.detailsCode ? `/${answer.detailsCode}` : ""}: ${answer.message}`,
    approvalAfter: `${after.status}${after.reason ? ` (${after.reason})` : ""}`,
    serverCalls: calls.length,
    run: finalEnd.status,
    toolResult: result ? { isError: result.isError, text: result.isError ? toolErrorMessage(result.text) : result.text } : null,
    askedAgainAfterChange: later.length,
  };
  log(`${what}: ${JSON.stringify(parkedView(seen))}`);
  return { seen, detail: { turn, approvalId: asked.id, answer, end, finalEnd, calls, before, after, reloadLines: reload?.lines } };
}

/** A parked call under a change as the evidence keeps it: as judged, with the detail. */
const parkedEvidence = (p: { seen: ParkedChange; detail: Record<string, unknown> }) => ({ observed: parkedView(p.seen), detail: p.detail });

/**
 * The agent writes the original policy bytes into `workspace` with its own `write` tool; the live
 * config is then pointed at that file (`tools.$include = includePath`). Refused: the watcher
 * rejects the edit and north stays denied (the trusted file's changed policy); admitted: north's
 * tools are offered to the next turn again.
 */
async function policyFromWorkspace(lab: Lab, client: GatewayClient, agentId: string, workspace: string, includePath: string, signal: AbortSignal, log: (m: string) => void): Promise<{ seen: FromWorkspace; detail: Record<string, unknown> }> {
  const bytes = toolPolicyBytes(POLICY);
  const wrote = await sendTurn(client, `fleetlab-call write ${JSON.stringify({ path: "same-policy.json", content: bytes })}`, newSessionKey(agentId));
  const wroteEnd = await waitRun(client, wrote.runId, 30_000);
  const onDisk = await lab.exec(lab.gateway.alias, ["cat", `${workspace}/same-policy.json`]);
  const changedAt = Date.now();
  await editGatewayConfig(lab, (c) => {
    (c.tools as Record<string, unknown>).$include = includePath;
  });
  const reload = await waitReload(lab, changedAt, { signal });
  const northBack = await northOffered(lab, client, `from-${agentId}-workspace`, signal);
  const configGet = (await client.request("config.get", {}).catch((e: Error) => ({ error: e.message }))) as { valid?: boolean; issues?: unknown; config?: { tools?: unknown } };
  const seen: FromWorkspace = {
    agent: agentId,
    workspace,
    includePath,
    onDisk: { exitCode: onDisk.exitCode, stdout: onDisk.stdout },
    reload: { verdict: reload.verdict, detail: reload.detail },
    policyInEffect: northBack,
  };
  log(`policy from ${workspace}: ${JSON.stringify(workspaceView(seen))}`);
  return { seen, detail: { wrote, wroteEnd: wroteEnd.status, onDisk, reloadLines: reload.lines, configGet: { valid: configGet.valid, issues: configGet.issues, tools: configGet.config?.tools } } };
}

/** A workspace policy as the evidence keeps it: as judged, with the detail. */
const workspaceEvidence = (w: { seen: FromWorkspace; detail: Record<string, unknown> }) => ({ observed: workspaceView(w.seen), detail: w.detail });

/** Whether a fresh turn is offered north's tools (the changed policy denies them). */
async function northOffered(lab: Lab, client: GatewayClient, label: string, signal: AbortSignal): Promise<boolean | null> {
  const marker = `fleetlab-probe-${label}`;
  const t = await sendTurn(client, marker);
  await waitRun(client, t.runId, 30_000);
  // expectation: a time-out is policyInEffect null in the signature: the 10 s window is fixed, not paced
  const req = await lab.model.waitForRequest((r) => r.userText?.includes(marker) === true, 10_000, { signal, expectation: true }).catch(() => undefined);
  return req ? mcpToolsOffered(req).some((n) => n.startsWith("north__")) : null;
}
