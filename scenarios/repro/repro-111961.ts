// Upstream: openclaw/openclaw#111961 "Failed MCP tool catalogs remain cached after the server
// recovers" (opened 2026-07-20 by ooiuuii, closed; the version line of the report is cut off in
// what could be read; the fix's date puts it on the 2026.7 line).
//
// Reporter's steps: 1. configure an MCP server whose first tools/list (or initial catalog
// request) fails; 2. start a session and let OpenClaw build the MCP tool catalog; 3. the server
// is omitted and a catalog diagnostic is recorded; 4. correct or start the server, without
// changing OpenClaw's config and without notifications/tools/list_changed; 5. start another turn
// in the same session runtime. Symptom: "The diagnostic-only catalog remains cached
// indefinitely. Later turns return the same failed snapshot without reconnecting or issuing
// tools/list again."
//
// What the user should have seen (asserted here): "OpenClaw should retry a failed MCP catalog
// after a bounded delay and expose the server's tools once it recovers". Bound: within
// RECOVER_S of the server's return, a turn in the same session is offered south__example_echo
// (the tools of the model request, as the scripted model received it), its call reaches south
// and returns south's answer (R-111961-recovers); and, as the fix states, "healthy sibling
// clients are not re-listed": north sees no new initialize or tools/list meanwhile
// (R-111961-north-not-relisted).
//
// Fix: PR openclaw/openclaw#111962 "fix(mcp): retry failed tool catalogs after recovery"
// (merged; failed catalogs are retried in the background after a 5 s cooldown, only the failed
// servers). First version carrying it: not confirmed (2026.9.6's changelog covers only its own
// range); inferred 2026.8.1 from dates. 2026.9.6 has BUNDLE_MCP_CATALOG_FAILURE_RETRY_MS = 5e3
// in dist/agents/agent-bundle-mcp-runtime.js.
//
// How this lab reproduces it: an own lab with the two gateway MCP servers (north, south), no
// node hosts, no git. south's container is stopped before the session's first turn (the gateway
// builds a session's MCP catalog at its first turn, so south fails to start: its name does not
// resolve), and that turn calls north__example_echo (precondition: south's tools are not
// offered). south is started again; once it answers /healthz, turns in the same session call
// south__example_echo until one works or RECOVER_S has passed (each turn is an observation; the
// default model script makes the call whatever tools are offered). Evidence: every attempt,
// both servers' request logs, the model requests.
//
// Outcome: not reproduced on 2026.9.6 (run 20261130-123534-22b6, PASS). The first turn with south
// stopped was offered only north__example_echo; after south answered again, turns 0.1-4.3 s later
// were still not offered south's tool ("Tool south__example_echo not found", south saw nothing),
// the turn 5.7 s after its return (about 6.5 s after the first turn: the 5 s cooldown, then the
// background retry) was offered it and its call reached south ("south echoed: back-5"); north saw
// no new initialize or tools/list meanwhile.
// The body drives and observes (ctx.observe); the checks below judge what it observed.
import { isResponsesCall } from "../../lab/clients/model.ts";
import { writeJson } from "../../lab/evidence/write.ts";
import { faults } from "../../lab/faults/index.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { echoAttempt, mcpEvidence, mcpToolsOffered, modelEvidence, waitMcpHealthy, type EchoAttempt } from "../../lab/kits/mcp.ts";
import { openSession } from "../../lab/kits/session.ts";
import { defineScenario, LabInfraError, type CheckDef, type FindingRecord, labStep } from "../../lab/scenario.ts";
import type { McpRecord } from "../../lab/clients/mcp.ts";
import { pollUntil } from "../../lab/core/wait.ts";

/** From south's return (it answers /healthz again) to a turn that is offered and calls its tool. */
const RECOVER_S = 30;
/** One turn's budget. */
const TURN_S = 60;
/** History messages read to find a turn's tool result (4 per turn; at most ~15 turns). */
const HISTORY = 200;

const EXPECTATION_RECOVERS = `within ${RECOVER_S} s of a server that was down at the session's first turn coming back, a turn in the same session is offered its tool (south__example_echo), and the call reaches it and returns its answer`;
const EXPECTATION_NORTH = "while the failed server's catalog is retried, the healthy server (north) is not re-listed: no new initialize or tools/list at north";

const findings: FindingRecord[] = [];

/** One of an MCP server's records, as the checks read it: its kind and JSON-RPC method. */
type RpcSeen = Pick<McpRecord, "seq" | "kind" | "rpcMethod">;
const rpcSeen = (r: McpRecord): RpcSeen => ({ seq: r.seq, kind: r.kind, rpcMethod: r.rpcMethod });

export interface Observed {
  /** The turn that worked, or else the last one at the bound (its text and what it showed), and south's records since its return. */
  recovery?: { last: Pick<Attempt, "text" | "observed">; south: RpcSeen[] };
  /** north's records since south's return. */
  north?: RpcSeen[];
}

/** A turn offered south__example_echo whose call reached south once and returned its answer. */
const southWorked = (a: Pick<Attempt, "text" | "observed">) => a.observed.offered && a.observed.southCalls === 1 && a.observed.result === `south echoed: ${a.text}`;
const rpcs = (records: RpcSeen[], method: string) => records.filter((r) => r.kind === "rpc" && r.rpcMethod === method).length;

const checks: CheckDef<Observed>[] = [
  {
    id: "R-111961-recovers",
    expectation: EXPECTATION_RECOVERS,
    judge: (h) => {
      if (!h.recovery) return undefined;
      const { last, south } = h.recovery;
      return {
        holds: southWorked(last),
        observed: normalise({ within_s: RECOVER_S, offered: last.observed.offered, southCalls: last.observed.southCalls, result: last.observed.result, southListedAfterReturn: rpcs(south, "tools/list") > 0 }),
      };
    },
  },
  {
    id: "R-111961-north-not-relisted",
    expectation: EXPECTATION_NORTH,
    judge: (h) => {
      if (!h.north) return undefined;
      const observed = { northInitialize: rpcs(h.north, "initialize"), northToolsList: rpcs(h.north, "tools/list") };
      return { holds: observed.northInitialize === 0 && observed.northToolsList === 0, observed: normalise(observed) };
    },
  },
];

export default defineScenario<Observed>({
  name: "repro-111961",
  upstream: {
    issue: 111961,
    title: "Failed MCP tool catalogs remain cached after the server recovers",
    status: "fixed",
    fixPr: 111962,
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/111961",
  },
  proves: "an MCP server down at a session's first turn is retried after it recovers: a later turn in the same session is offered and can call its tool, the healthy server is not re-listed (openclaw/openclaw#111961)",
  topology: "own",
  spec: { nodes: { count: 0 }, git: { enabled: false } },
  findings,
  checks,
  timeoutMs: 300_000,
  async run({ lab, log, file, observe, signal }) {
    const north = lab.mcp("north");
    const down = faults.stop(lab, "south", { timeoutSeconds: 2 });
    const attempts: Attempt[] = [];
    const extra: Record<string, unknown> = {};
    try {
      extra.southStopped = await labStep("stop south", () => down.inject());
      const s = await openSession(lab);

      // ---- 1. the first turn, with south down: the catalog is built without it
      const first = await s.turn('fleetlab-call north__example_echo {"text":"first"}', TURN_S * 1000);
      const firstReq = (await labStep("read the model's requests", () => lab.model.requests())).filter(isResponsesCall).find((r) => (r.userText ?? "").includes('"text":"first"'));
      const firstOffered = firstReq ? mcpToolsOffered(firstReq) : null;
      log(`first turn with south down: ${first.status} "${first.text ?? ""}"; MCP tools offered: ${JSON.stringify(firstOffered)}`);
      extra.first = { end: first, offered: firstOffered };
      if (!firstOffered) throw new LabInfraError("the scripted model recorded no request for the first turn");
      if (firstOffered.includes("south__example_echo")) throw new LabInfraError(`south's tools were offered at the first turn although south was stopped (${JSON.stringify(firstOffered)}): the reported state was not reached`);

      // ---- 2. south comes back
      extra.southStarted = await labStep("start south again", () => down.heal());
      await labStep("wait for south's /healthz", () => waitMcpHealthy(lab, "south", { signal }));
      const backAt = Date.now();
      const northSince = await labStep("read north's records", () => north.lastSeq());
      const southSince = await labStep("read south's records", () => lab.mcp("south").lastSeq());
      log(`south answers again; north's record seq ${northSince}, south's ${southSince}`);

      // ---- 3. turns in the same session call south's tool until one works, for RECOVER_S
      const polled = await pollUntil(
        "a turn in the session offered south__example_echo whose call reaches south",
        async () => {
          const n = attempts.length + 1;
          const a: Attempt = { n, ...(await echoAttempt(lab, s, "south", `back-${n}`, southSince, { timeoutMs: TURN_S * 1000, history: HISTORY })) };
          attempts.push(a);
          log(`attempt ${a.n} (+${Math.round((a.at - backAt) / 100) / 10} s): ${JSON.stringify(a.observed)}`);
          return a;
        },
        southWorked,
        { deadlineMs: RECOVER_S * 1000, from: backAt, intervalMs: 1_000, signal },
      );
      const southRecords = await labStep("read south's records", () => lab.mcp("south").requests({ since: southSince }));
      const last = polled.last;
      observe("recovery", { last: { text: last.text, observed: last.observed }, south: southRecords.map(rpcSeen) });
      extra.recovered = { held: polled.held, msAfterReturn: polled.ms, attempts: attempts.length };

      // ---- 4. north was not re-listed meanwhile
      const northRecords = await labStep("read north's records", () => north.requests({ since: northSince }));
      const northSeen = northRecords.map(rpcSeen);
      observe("north", northSeen);
      log(`north since south's return: ${JSON.stringify({ northInitialize: rpcs(northSeen, "initialize"), northToolsList: rpcs(northSeen, "tools/list") })}`);
    } finally {
      extra.healedAtEnd = await down.heal().catch((e: Error) => ({ error: e.message }));
      writeJson(file("attempts.json"), attempts);
      writeJson(file("mcp-servers.json"), await mcpEvidence(lab, ["north", "south"]));
      writeJson(file("model-requests.json"), await modelEvidence(lab).catch((e: Error) => ({ unreachable: e.message })));
      writeJson(file("evidence.json"), extra);
    }
  },
});

/** One turn calling south__example_echo {text: back-n}, numbered. */
type Attempt = { n: number } & EchoAttempt<"south">;

