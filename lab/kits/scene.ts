// How a scenario opens and closes, one call each, so that every scenario does it the same way.
// A scene: the scenario's evidence (written to <scenario>/evidence.json however it ends) and a
// fault timeline whose faults are healed when the body ends (withFaults). A node scene adds the
// node host the scenario is about and its wire tap. An MCP scene: the MCP servers and the model
// reset before (a shared lab keeps what earlier scenarios left) and after, the operator's events
// recorded, and the MCP evidence saved however it ends.
//
//   await nodeScene(ctx, { evidence: { boundS: BOUND_S } }, async ({ alias, tap, evidence, tl }) => {
//     ... evidence.before = await nodeView(lab, alias); faults.kill(lab, alias, { timeline: tl }) ...
//   });
//   await nodesScene(ctx, { nodes: 2 }, async ({ aliases, tap, evidence, tl }) => { ... tap("node-2") ... });
//   await mcpScene(ctx, { reset: ["south"] }, async ({ events, extra }) => { ... });
import type { TapControl } from "../clients/tap.ts";
import { writeJson } from "../evidence/write.ts";
import type { ScenarioContext } from "../scenario.ts";
import { EventLog } from "./events.ts";
import { saveMcpEvidence } from "./mcp.ts";
import { withFaults, type ScenarioTimeline } from "./timeline.ts";

/** What a scene's body gets; `tl` unless it was opened with `faults: false`. */
export type Scene<F extends boolean = true> = { evidence: Record<string, unknown> } & (F extends false ? Record<never, never> : { tl: ScenarioTimeline });

export interface SceneOptions<S> {
  /** The first entries of evidence.json (after `node` in a node scene; an entry `node` here replaces the alias). */
  evidence?: Record<string, unknown>;
  /** false: no fault timeline (and no faults.jsonl), for a scenario that injects no faults. */
  faults?: boolean;
  /** When the body ends, however it ends: after its faults are healed, before evidence.json is written. */
  atEnd?: (s: S) => unknown;
}

/** Run `body` with the scenario's evidence and (unless `faults: false`) its fault timeline; evidence.json is written however it ends. */
export async function scene<F extends boolean = true>(ctx: ScenarioContext, opts: SceneOptions<Scene<F>> & { faults?: F }, body: (s: Scene<F>) => Promise<void>): Promise<void> {
  await play(ctx, { evidence: { ...opts.evidence } } as Scene<F>, opts, body); // tl is added by play()
}

/** A scene about one node host: its alias and its wire tap (taken when first read: a lab may have no taps). */
export type NodeScene<F extends boolean = true> = Scene<F> & { alias: string; readonly tap: TapControl };

/**
 * A scene about the node host `lab.nodes[node]` (default the first; the last when there are
 * fewer): evidence.json starts with `node: <alias>`.
 */
export async function nodeScene<F extends boolean = true>(ctx: ScenarioContext, opts: SceneOptions<NodeScene<F>> & { faults?: F; node?: number }, body: (s: NodeScene<F>) => Promise<void>): Promise<void> {
  const { lab } = ctx;
  const alias = lab.nodes[Math.min(opts.node ?? 0, lab.nodes.length - 1)]!.alias;
  let tap: TapControl | undefined;
  const s: { evidence: Record<string, unknown>; alias: string; readonly tap: TapControl } = {
    evidence: { node: alias, ...opts.evidence },
    alias,
    get tap(): TapControl {
      return (tap ??= lab.tap(alias));
    },
  };
  await play(ctx, s as unknown as NodeScene<F>, opts, body); // tl is added by play()
}

/** A scene about several node hosts: their aliases, and each one's wire tap (taken when first asked for). */
export type NodesScene<F extends boolean = true> = Scene<F> & { aliases: string[]; tap(alias: string): TapControl };

/**
 * A scene about several node hosts: `nodes` is how many of the lab's first nodes (a number), or
 * which ones (indexes into lab.nodes); default every node. evidence.json starts with
 * `nodes: [<alias>, ...]`. A scene that asks for more nodes than the lab has fails at once,
 * naming the spec's count (give the scenario `spec: { nodes: { count: N } }`).
 */
export async function nodesScene<F extends boolean = true>(ctx: ScenarioContext, opts: SceneOptions<NodesScene<F>> & { faults?: F; nodes?: number | readonly number[] }, body: (s: NodesScene<F>) => Promise<void>): Promise<void> {
  const all = ctx.lab.nodes.map((m) => m.alias);
  const want = opts.nodes === undefined ? all.map((_, i) => i) : typeof opts.nodes === "number" ? Array.from({ length: opts.nodes }, (_, i) => i) : [...opts.nodes];
  const missing = want.filter((i) => !Number.isInteger(i) || i < 0 || i >= all.length);
  if (missing.length) throw new Error(`nodesScene: the lab has ${all.length} node host(s) (${all.join(", ") || "none"}); node index(es) ${missing.join(", ")} do not exist: raise spec.nodes.count`);
  const aliases = want.map((i) => all[i]!);
  const taps = new Map<string, TapControl>();
  const s = {
    evidence: { nodes: aliases, ...opts.evidence },
    aliases,
    tap(alias: string): TapControl {
      if (!aliases.includes(alias)) throw new Error(`nodesScene: ${alias} is not one of this scene's nodes (${aliases.join(", ")})`);
      let t = taps.get(alias);
      if (!t) taps.set(alias, (t = ctx.lab.tap(alias)));
      return t;
    },
  };
  await play(ctx, s as unknown as NodesScene<F>, opts, body); // tl is added by play()
}

async function play<S extends { evidence: Record<string, unknown> }>(ctx: ScenarioContext, s: S, opts: { faults?: boolean; atEnd?: (s: S) => unknown }, body: (s: S) => Promise<void>): Promise<void> {
  try {
    if (opts.faults === false) await body(s);
    else await withFaults(ctx, (tl) => body(Object.assign(s, { tl })));
  } finally {
    try {
      await opts.atEnd?.(s);
    } finally {
      writeJson(ctx.file("evidence.json"), s.evidence);
    }
  }
}

/** The standard lab's MCP servers: every MCP scene starts with both reset. */
const MCP_SERVERS = ["north", "south"] as const;

export interface McpScene {
  /** The operator's approval, chat and tool events (lab/kits/events.ts), saved as evidence. */
  events: EventLog;
  /** More evidence: each entry is saved as <name>.json. */
  extra: Record<string, unknown>;
}

/**
 * Run an MCP scenario's body with the operator's events recorded; when it ends, however it
 * ends, the events stop and the MCP evidence is saved (saveMcpEvidence: the servers' records,
 * approval events, events, model requests, one file per entry of `extra`). With `reset` (the
 * servers the scenario changes), both standard MCP servers and the model are reset before,
 * and those servers and the model after.
 */
export async function mcpScene(ctx: ScenarioContext, opts: { reset?: readonly (typeof MCP_SERVERS)[number][]; atEnd?: (s: McpScene) => unknown }, body: (s: McpScene) => Promise<void>): Promise<void> {
  const { lab, file } = ctx;
  if (opts.reset) await Promise.all([...MCP_SERVERS.map((n) => lab.mcp(n).reset()), lab.model.reset()]);
  const s: McpScene = { events: new EventLog(lab.operator.client), extra: {} };
  try {
    await body(s);
  } finally {
    s.events.stop();
    await opts.atEnd?.(s);
    await saveMcpEvidence(lab, file, s.events, s.extra);
    if (opts.reset) await Promise.all([...opts.reset.map((n) => lab.mcp(n).reset()), lab.model.reset()]);
  }
}
