import { defineScenario, type FindingRecord } from "../../lab/scenario.ts";
import * as op from "../../lab/clients/operator.ts";
import { refusal, isRefused } from "../../lab/clients/operator.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { sleep, waitFor } from "../../lab/core/wait.ts";
import { answersRefused, fanOut, fleetSpec, invokesOnWire, percentiles, type FannedInvoke } from "../../lab/kits/fleet.ts";
import { waitForWorkerHost } from "../../lab/kits/nodes.ts";
import { provenWorkerTurn, turnOnNode, type ProvenTurn, type TurnSeen } from "../../lab/kits/proof.ts";
import { scene } from "../../lab/kits/scene.ts";
import { createWorkerSession, dispatchedCheck, dispatchSeen, dispatchTo, uniqueName, type DispatchSeen } from "../../lab/kits/workers.ts";
import { publishWorkspace } from "../../lab/kits/workspace.ts";
import { GatewayError } from "../../lab/clients/gateway.ts";

// The real node hosts are still served while the gateway is busy with a fleet of N scripted
// nodes (fleetSpec(): FLEET, default 200). A load keeps the fleet busy: node.invoke (system.which)
// fanned out over all N in LOAD_CONCURRENCY lanes, each lane invoking its share of the fleet one
// node after another, over and over (so LOAD_CONCURRENCY invokes are in flight at a time and
// every N invokes are a round's worth, a pass over the whole fleet), and node.list read back to
// back beside them. Lanes, not rounds with a barrier: an invoke the gateway holds until its
// timeout stalls its own lane, not the load (seen: a round waiting 30 s for one invoke while the
// turn ran). LOAD_CONCURRENCY is the rate fleet-fanout's second round judges on a gateway with
// nothing else to do (all N at once is fleet-fanout's first round, where OpenClaw refuses part of
// them as overloaded on its own: here that would hide what the turns do). Under that load one
// worker turn runs on node-1 and then one on node-2, each in a session placed on its node and
// proven there (lab/kits/proof.ts: a file only the node's checkout has is read, and the gateway's
// worker.launch.v1 for that placement is on the node's tap), as two-nodes and gateway-restart
// prove theirs. Before the load, two turns on each node with the fleet quiet: the first warms the
// session up (its worker environment's first launch; seen 15 s against 6 s), the second is the
// same run's baseline, which the turns' times under load are reported against (a ratio, not
// judged). What a user of the real nodes relies on:
//   - F-real-turn-served: each turn under the fleet's load completes, proven on its node, within
//     TURN_S s: the whole-turn budget the lab gives a normal worker turn (lab/kits/workers.ts
//     workerTurn, chat.send + agent.wait), judged here in wall time;
//   - F-real-fleet-unharmed: no invoke of the load in flight during a turn came back with another
//     node's answer (and some came back with their own). The invokes the gateway refused while
//     busy (overloaded, or a node's answer refused) are counted in the log and evidence, not
//     judged here: fleet-fanout judges those causes one check each, on a gateway with nothing
//     else to do.
//   - F-real-operator-served: the gateway never refuses an operator's request for these turns as
//     overloaded (seen: sessions.describe refused "worker task capacity reached" with the fleet
//     connected and idle); such a refused turn is tried again, up to 3 times, before it counts as
//     not served.
// Premise P-real-two-nodes: the lab has (at least) two real node hosts, one turn each (the body
// stops at once otherwise). Before the load, each real node's session is placed on it
// (R-real-dispatch) and its two turns with the fleet quiet run on it (R-real-quiet-turn): the
// body stops at the first that falls short, as the turns under load need both.
// Premise P-real-load-started: the fleet's load started and did not stop on an error of the
// lab's own load loop before the turns under load (a round's worth of invokes had completed).
// Premise P-real-fleet-busy: the fleet's load really ran during each turn: invokes were in flight
// when the turn began (the call that plants its marker and sends it) and at least a round's worth
// (N) of invokes completed within the turn's window (from that call until the turn's proof is
// read).
// Signatures name what happened, not how many times (the log and evidence keep the counts):
// the refusals by the gateway's code and message, and its refusals of the nodes' own answers
// (node.invoke.result), which a node host does not send again.
// Own lab: fleetSpec(), shared by the fleet scenarios (one paired-state snapshot).
// The body drives and observes (ctx.observe); the premise and the checks below judge what it observed.
const TURN_S = 120;
/** The gateway's words when its worker task pool is full (2026.9.6: "worker task capacity reached: code=overloaded"). */
const OVERLOADED = /worker task capacity reached|server is busy/i;
const OVERLOAD_TRIES = 3;
const LOAD_CONCURRENCY = 16;

/** One invoke of the load: its node, when it went out and came back, how it ended. */
interface LoadInvoke {
  alias: string;
  nodeId: string;
  start: number;
  end: number;
  outcome: FannedInvoke["end"];
  code?: string;
}

/** A turn's window, as the load loop's clock reads it. */
interface Window {
  alias: string;
  from: number;
  to: number;
}

/** One turn under load as observed: what its proof read (turnOnNode judges it) and its time. */
interface BusyTurn {
  alias: string;
  seen: TurnSeen;
  ms?: number;
}

/** A turn with the fleet quiet, before the load: which node, which of its two turns, and what its proof read (turnOnNode judges it). */
interface QuietTurn {
  alias: string;
  what: "warm-up" | "baseline";
  seen: TurnSeen;
}

/** What the body observed. */
export interface Observed {
  /** The scripted fleet's size (a round's worth of invokes). */
  fleet?: { scripted: number };
  /** How many real node hosts the lab has (P-real-two-nodes). */
  realNodes?: number;
  /** Each real node's session dispatched to it, in order (the rest needs every one active: the body stops at the first that is not). */
  dispatch?: DispatchSeen[];
  /** The turns with the fleet quiet, in order (the body stops at the first not proven on its node). */
  quietTurns?: QuietTurn[];
  /** Once a round's worth of the load's invokes had completed (or it stopped): the error that stopped the load loop, or null (P-real-load-started). */
  loadStarted?: { error: string | null };
  /**
   * The load during the turns: each turn's window (the load loop's clock), and the load's invokes
   * and node.list reads that touched a window (an invoke ended at or after its start and began at
   * or before its end; a read likewise), how each invoke ended.
   */
  load?: { windows: Window[]; invokes: Pick<LoadInvoke, "start" | "end" | "outcome">[]; lists: { start: number; ms: number }[] };
  /** The turns under load: how many sessions were placed (one turn each), and each turn run. */
  turns?: { placed: number; busy: BusyTurn[] };
  /** The gateway's refusals of the operator's requests for the turns as overloaded ("<code>: <message>"), each time. */
  overloaded?: string[];
}

/** Each turn window's load: invokes in flight at its start, completed within it (and how many rounds' worth), node.list reads within it, the invokes overlapping it. */
function duringOf<T extends { start: number; end: number }>(windows: readonly Window[], invokes: readonly T[], lists: readonly { start: number; ms: number }[], n: number) {
  return windows.map((w) => {
    const inFlightAtStart = invokes.filter((r) => r.start <= w.from && r.end > w.from).length;
    const completed = invokes.filter((r) => r.end >= w.from && r.end <= w.to).length;
    const overlapping = invokes.filter((r) => r.start < w.to && r.end > w.from);
    const listsWithin = lists.filter((l) => l.start >= w.from && l.start + l.ms <= w.to).length;
    return { alias: w.alias, windowMs: w.to - w.from, inFlightAtStart, invokesCompleted: completed, roundsWorth: Math.floor(completed / n), nodeListReads: listsWithin, overlapping };
  });
}

/** A turn under load served: proven on its node within TURN_S. */
const servedOf = (t: BusyTurn) => turnOnNode(t.seen).holds && t.ms !== undefined && t.ms <= TURN_S * 1000;

/** What a turn that was not served ended with: the gateway's words without the run and session named, or the proof's shortfall. */
function failureOf(t: BusyTurn): string {
  if (t.seen.error) return t.seen.error.replace(/^chat turn \S+ in \S+ ended with status /, "");
  const proof = turnOnNode(t.seen);
  if (!proof.holds) return `not proven on its node: ${JSON.stringify(proof.observed)}`;
  return `took longer than ${TURN_S} s`;
}

// Registered findings (lab/findings/findings.ts).
const findings: FindingRecord[] = [
  {
    // 2026.9.6, under the fleet's load (16 lanes of node.invoke over 200 scripted nodes, node.list
    // back to back): node-1's worker turn ran 76.7 s and ended "Cloud worker finished, but its
    // workspace result could not be reconciled: node workspace command failed (ABORTED)"
    // (WorkerWorkspaceReconciliationError in the gateway's log; its worker disk-space probe to the
    // node failed ABORTED 10 s later), while the gateway refused invokes "worker task capacity
    // reached: code=overloaded"; node-2's turn beside it was served in 11.1 s. The machine was
    // within the lab's plan (pace 3.0x at worst). Seen once, in the full make lab run 20261204-192202-05e2609c6e330d1e
    // (the first run after the checks became declared functions of the observations; the
    // scenario's body drives as before); not in the runs before it (20261204-163426, make repro
    // 20261204-163938 3 of 3, the loaded make lab 20261204-172214, 20261204-175649).
    id: "F-real-turn-served",
    expectation: "each turn on a real node host under the fleet's load completes, proven on its node, within 120 s",
    signature: { turns: 2, served: 1, failedWith: ['error: "⚠️ Agent failed before reply: Cloud worker finished, but its workspace result could not be reconciled: node workspace command failed (ABORTED).\\nTo view logs, run `openclaw logs --follow` in a terminal."'] },
    versions: ["2026.9.6"],
    variants: [
      {
        // The same reconciliation error with another cause, 2026.9.6, in the full make lab run
        // 20261204-215954-2096fc50e9e21e1d (pace within plan, no stall of the lab's own): node-2's
        // turn under the fleet's load ended after 6.2 s "Cloud worker finished, but its workspace
        // result could not be reconciled: device worker node is not connected with the supervisor
        // dialect" (gateway: "lane task error ... errorName=WorkerWorkspaceReconciliationError"),
        // though node-2 stayed connected (no disconnect in the gateway's or the node's log) and
        // node-1's turn beside it was served in 6.4 s. One record: the turn is not served because
        // the workspace result is not reconciled under load; the cause OpenClaw names varies.
        versions: "2026.9.6",
        signature: { turns: 2, served: 1, failedWith: ['error: "⚠️ Agent failed before reply: Cloud worker finished, but its workspace result could not be reconciled: device worker node is not connected with the supervisor dialect.\\nTo view logs, run `openclaw logs --follow` in a terminal."'] },
        note: "the reconciliation fails with 'device worker node is not connected with the supervisor dialect' (the node stayed connected)",
      },
    ],
    kind: "shortfall",
    evidence: "fixtures/findings/F-real-turn-served.json",
    intermittent: true,
  },
  {
    // 2026.9.6 refuses an operator's sessions.describe (the turn's placement read, before
    // anything of the turn is sent) with UNAVAILABLE "WorkerTaskError: worker task capacity
    // reached: code=overloaded", no retryable flag, with the fleet of 200 connected: once in
    // make lab run 20261204-175649 (node-1's warm-up turn, the fleet connected and idle; tried
    // again, it passed), and
    // before this check existed in runs 20261204-162536 and 20261204-162827 (the scenario
    // ended there); not in 6 other runs (20261204-163426, make repro 20261204-163938 3/3,
    // the loaded make lab 20261204-172214).
    id: "F-real-operator-served",
    expectation: "with N scripted nodes connected, the gateway never refuses the operator's requests for the real node hosts' turns as overloaded",
    signature: { refused: ["UNAVAILABLE: WorkerTaskError: worker task capacity reached: code=overloaded"] },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: "fixtures/findings/F-real-operator-served.json",
    intermittent: true,
  },
];

export default defineScenario<Observed>({
  name: "fleet-real-nodes",
  proves: "while N scripted nodes are kept busy with node.invoke fanned out over them, a worker turn on each real node host completes on its node within the lab's normal turn budget, and the invokes running meanwhile are all routed",
  topology: "own",
  alone: true,
  spec: fleetSpec(),
  findings,
  premises: [
    {
      id: "P-real-two-nodes",
      what: "the lab has at least two real node hosts, a turn under load on each",
      judge: (h) => (h.realNodes === undefined ? undefined : { met: h.realNodes >= 2, observed: { realNodes: h.realNodes } }),
    },
    {
      id: "P-real-load-started",
      what: "the fleet's load started (a round's worth of invokes completed) and its loop did not stop on an error of the lab's own before the turns under load",
      judge: (h) => h.loadStarted && { met: h.loadStarted.error === null, observed: normalise({ error: h.loadStarted.error }) },
    },
    {
      id: "P-real-fleet-busy",
      what: "during each turn the fleet's load was running: invokes in flight when the turn began and at least a round's worth (N) completed within the turn's window",
      judge: (h) => {
        if (!h.fleet || !h.load || !h.turns) return undefined;
        const during = duringOf(h.load.windows, h.load.invokes, h.load.lists, h.fleet.scripted);
        return { met: during.length === h.turns.placed && during.every((d) => d.inFlightAtStart > 0 && d.roundsWorth >= 1), observed: during.map(({ overlapping: _, ...d }) => d) };
      },
    },
  ],
  checks: [
    dispatchedCheck<Observed>("R-real-dispatch", (h) => h.dispatch),
    {
      id: "R-real-quiet-turn",
      expectation: "with the fleet quiet, each real node host's warm-up and baseline worker turns run on it (each reads a node-only file; worker.launch.v1 on the node's tap)",
      judge: (h) => {
        if (!h.quietTurns?.length) return undefined;
        const short = h.quietTurns.flatMap((t) => {
          const proof = turnOnNode(t.seen);
          return proof.holds ? [] : [{ alias: t.alias, what: t.what, ...proof.observed }];
        });
        return { holds: short.length === 0, observed: normalise({ turns: h.quietTurns.length, notOnNode: short }) };
      },
    },
    {
      id: "F-real-turn-served",
      expectation: (h) => `with ${h.fleet?.scripted ?? "N"} scripted nodes kept busy, a worker turn on each real node host completes on its node (it reads a node-only file; worker.launch.v1 on the node's tap) within ${TURN_S} s, the lab's budget for a normal worker turn`,
      judge: (h) => {
        if (!h.turns) return undefined;
        const { busy, placed } = h.turns;
        const served = busy.map(servedOf);
        return {
          holds: busy.length === placed && served.every((s) => s),
          observed: normalise({ turns: busy.length, served: served.filter((s) => s).length, failedWith: [...new Set(busy.filter((_, i) => !served[i]).map(failureOf))] }),
        };
      },
    },
    {
      id: "F-real-fleet-unharmed",
      expectation: (h) => `no node.invoke of the load (all ${h.fleet?.scripted ?? "N"} scripted nodes, ${LOAD_CONCURRENCY} in flight at a time) in flight during the turns comes back with another node's answer, and some came back with their own`,
      judge: (h) => {
        if (!h.fleet || !h.load) return undefined;
        const judged = [...new Set(duringOf(h.load.windows, h.load.invokes, h.load.lists, h.fleet.scripted).flatMap((d) => d.overlapping))];
        return {
          holds: judged.some((r) => r.outcome === "routed") && !judged.some((r) => r.outcome === "misrouted"),
          observed: normalise({ routed: judged.some((r) => r.outcome === "routed") ? "some" : "none", misrouted: judged.some((r) => r.outcome === "misrouted") }),
        };
      },
    },
    {
      id: "F-real-operator-served",
      expectation: (h) => `with ${h.fleet?.scripted ?? "N"} scripted nodes connected, the gateway never refuses the operator's requests for the real node hosts' turns as overloaded`,
      judge: (h) => h.overloaded && { holds: h.overloaded.length === 0, observed: normalise({ refused: [...new Set(h.overloaded)].sort() }) },
    },
  ],
  timeoutMs: 600_000,
  async run(ctx) {
    const { lab, log, observe, proceed, signal } = ctx;
    const client = lab.operator.client;
    const aliases = lab.scriptedAliases;
    const n = aliases.length;
    const nodes = lab.nodes.map((m) => m.alias);
    observe("fleet", { scripted: n });
    observe("realNodes", nodes.length);
    if (!proceed("P-real-two-nodes")) return;
    // The operator's requests for a turn the gateway refused as overloaded (F-real-operator-served).
    // Such a refusal comes before anything of the turn is sent (its placement read,
    // sessions.describe): the turn is tried again, as an operator's client would, up to
    // OVERLOAD_TRIES times, and the refusal kept.
    const overloaded: string[] = [];
    const turn = async (key: string, alias: string, note: string): Promise<ProvenTurn> => {
      for (let i = 1; ; i++) {
        try {
          return await provenWorkerTurn(lab, key, alias, { note });
        } catch (err) {
          if (!(err instanceof GatewayError) || !OVERLOADED.test(err.message) || i >= OVERLOAD_TRIES) throw err;
          overloaded.push(`${err.code}: ${err.gatewayMessage}`);
          log(`${alias}: the gateway refused the turn's ${err.method} as overloaded (${err.gatewayMessage}); trying the turn again (${i} of ${OVERLOAD_TRIES})`);
          await sleep(2_000, signal);
        }
      }
    };
    await scene(ctx, { faults: false, evidence: { fleet: n, nodes, turnS: TURN_S, loadConcurrency: LOAD_CONCURRENCY } }, async ({ evidence }) => {
      // ---- one placed session per real node, each with a turn while the fleet is quiet
      await Promise.all(nodes.map((a) => waitForWorkerHost(lab, a, { signal })));
      const ws = await publishWorkspace(lab, { repo: uniqueName("fleet-real") });
      const placed: { alias: string; key: string }[] = [];
      const dispatched: DispatchSeen[] = [];
      for (const a of nodes) {
        const s = await createWorkerSession(lab, ws, { label: `fleet-real-nodes ${a}` });
        const d = await dispatchTo(lab, s.key, a);
        dispatched.push(dispatchSeen(a, d));
        observe("dispatch", [...dispatched]);
        if (!proceed("R-real-dispatch")) return;
        placed.push({ alias: a, key: s.key });
      }
      const warmUp: (ProvenTurn & { alias: string })[] = [];
      const quiet: (ProvenTurn & { alias: string })[] = [];
      const quietTurns: QuietTurn[] = [];
      for (const p of placed) {
        for (const [what, into] of [["warm-up", warmUp], ["baseline", quiet]] as const) {
          const t = await turn(p.key, p.alias, `fleet quiet, ${what}`);
          quietTurns.push({ alias: p.alias, what, seen: t.seen });
          observe("quietTurns", [...quietTurns]);
          if (!proceed("R-real-quiet-turn")) return;
          log(`${p.alias}: ${what} turn with the fleet quiet in ${t.ms} ms`);
          into.push({ alias: p.alias, ...t });
        }
      }
      evidence.warmUp = warmUp;
      evidence.quiet = quiet;

      // ---- the load: LOAD_CONCURRENCY lanes over the fleet, and node.list read back to back beside them
      const invokes: LoadInvoke[] = [];
      const lists: { start: number; ms: number; error?: string }[] = [];
      let stop = false;
      let loadError: string | undefined;
      const lanes = Array.from({ length: Math.min(LOAD_CONCURRENCY, n) }, (_, k) => aliases.filter((_, i) => i % LOAD_CONCURRENCY === k));
      const running = () => !stop && !signal.aborted;
      const load = Promise.all([
        ...lanes.map(async (lane) => {
          while (running())
            for (const alias of lane) {
              if (!running()) break;
              const start = Date.now();
              const [r] = await fanOut(lab.fleet, client, [alias]);
              invokes.push({ alias, nodeId: r!.nodeId, start, end: Date.now(), outcome: r!.end, ...(r!.code ? { code: r!.code } : {}) });
            }
        }),
        (async () => {
          while (running()) {
            const start = Date.now();
            const got = await client.request("node.list", {}, { timeoutMs: 30_000 }).catch(refusal);
            lists.push({ start, ms: Date.now() - start, ...(isRefused(got) ? { error: got.detailsCode ?? got.code } : {}) });
          }
        })(),
      ]).catch((err: Error) => {
        loadError = err.message;
      });
      const windows: Window[] = [];
      const busy: (ProvenTurn & { alias: string })[] = [];
      try {
        await waitFor("a round's worth of invokes under load", () => invokes.length >= n || loadError !== undefined, { timeoutMs: 120_000, signal });
        observe("loadStarted", { error: loadError ?? null });
        // Stopped here, the finally below still stops the load and waits for it.
        if (!proceed("P-real-load-started")) return;
        log(`load running: the first ${n} invokes (${LOAD_CONCURRENCY} lanes) in ${invokes[n - 1]!.end - invokes[0]!.start} ms`);
        for (const p of placed) {
          const from = Date.now();
          const t = await turn(p.key, p.alias, "fleet busy");
          const to = Date.now();
          windows.push({ alias: p.alias, from, to });
          busy.push({ alias: p.alias, ...t });
          log(`${p.alias}: turn with the fleet busy in ${t.ms ?? "-"} ms (${to - from} ms with its marker and proof): ${JSON.stringify(t.observed)}`);
        }
      } finally {
        stop = true;
        await load;
      }
      evidence.busy = busy;
      evidence.windows = windows;
      evidence.loadError = loadError ?? null;

      // ---- the premise: the load ran through each turn
      const during = duringOf(windows, invokes, lists, n);
      for (const d of during) log(`${d.alias}'s turn window (${d.windowMs} ms): ${d.inFlightAtStart} invokes in flight at its start; ${d.invokesCompleted} completed within it (${d.roundsWorth} round(s)' worth of ${n}), ${d.nodeListReads} node.list reads`);
      // P-real-fleet-busy and F-real-fleet-unharmed read the load that touched a turn's window; the premise also how many turns there were to run.
      const touches = (from: number, to: number) => windows.some((w) => to >= w.from && from <= w.to);
      observe("load", {
        windows,
        invokes: invokes.filter((r) => touches(r.start, r.end)).map((r) => ({ start: r.start, end: r.end, outcome: r.outcome })),
        lists: lists.filter((l) => touches(l.start, l.start + l.ms)).map((l) => ({ start: l.start, ms: l.ms })),
      });
      observe("turns", { placed: placed.length, busy: busy.map((t) => ({ alias: t.alias, seen: t.seen, ms: t.ms })) });
      evidence.during = during.map(({ overlapping: _, ...d }) => d);

      // ---- the turns under load
      const ratio = busy.map((t) => {
        const q = quiet.find((x) => x.alias === t.alias)!;
        return { alias: t.alias, quietMs: q.ms ?? null, busyMs: t.ms ?? null, ratio: q.ms && t.ms ? Math.round((t.ms / q.ms) * 100) / 100 : null };
      });
      evidence.turnTimes = ratio;
      log(`turn times, fleet busy vs quiet: ${ratio.map((r) => `${r.alias} ${r.busyMs} ms vs ${r.quietMs} ms (x${r.ratio})`).join(", ")}`);

      // ---- the fleet during the turns
      const judged = [...new Set(during.flatMap((d) => d.overlapping))];
      const refusedWith = new Map(invokesOnWire(client, Math.min(...judged.map((r) => r.start)), Math.max(...judged.map((r) => r.end))).flatMap((w) => (w.error ? [[w.nodeId, w.error] as const] : [])));
      const bad: Record<string, number> = {};
      for (const r of judged) {
        if (r.outcome === "routed") continue;
        const k = r.outcome === "refused" ? (refusedWith.get(r.nodeId) ?? r.code ?? "?") : "misrouted";
        bad[k] = (bad[k] ?? 0) + 1;
      }
      const atNode = judged.length ? answersRefused(aliases.map((a) => lab.scripted(a)), Math.min(...judged.map((r) => r.start)), Math.max(...judged.map((r) => r.end))).counts : {};
      const latency = percentiles(invokes.map((r) => r.end - r.start));
      const nodeList = percentiles(lists.map((l) => l.ms));
      log(`load: ${invokes.length} invokes over ${lanes.length} lanes (${Math.floor(invokes.length / n)} rounds' worth; ${latency.text}); node.list beside them ${nodeList.text}; invokes in flight during the turns: ${judged.length}, not routed: ${JSON.stringify(bad)}; the nodes' answers refused by the gateway: ${JSON.stringify(atNode)}`);
      evidence.load = {
        lanes: lanes.length,
        invokes: invokes.length,
        latency,
        nodeListMs: nodeList,
        nodeListErrors: lists.filter((l) => l.error).map((l) => l.error),
        judged: judged.length,
        notRouted: bad,
        answersRefusedAtNode: atNode,
        notRoutedAll: invokes.filter((r) => r.outcome !== "routed"),
      };
      // F-real-operator-served reads the turns' refusals as overloaded.
      observe("overloaded", overloaded);
      evidence.overloaded = overloaded;
      evidence.nodesAfter = (await op.listNodes(client)).filter((e) => nodes.includes(e.displayName ?? "")).map((e) => ({ alias: e.displayName, connected: e.connected, workerSlots: e.workerSlots ?? null }));
    });
  },
});
