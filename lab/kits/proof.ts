// Proof that a worker turn ran on a node host and not on the gateway. A reply alone proves
// nothing: a turn that fell back to a gateway-local run answers the same scripted text. So a
// counted turn (1) asks the scripted model to make the worker `read` a file that exists only in
// the node's checkout, written there by the lab just before (the gateway's worktree never has
// it, so a gateway run reads nothing), and (2) the node's wire tap must show the gateway
// launching a worker for that placement (worker.launch.v1 with its environmentId) after the
// turn began. Both together are the proof; either missing is a failed expectation, and a
// proof the lab itself could not make (its exec or its tap failed) is LabInfraError: unknown.
import assert from "node:assert/strict";
import type { Frame } from "../clients/tap.ts";
import type { Placement } from "../clients/sessions.ts";
import { LabInfraError } from "../definitions/verdict.ts";
import type { Lab } from "../topology/lab.ts";
import { launchOf, wireSummary } from "./node-wire.ts";
import { placementOf, uniqueName, workerTurn } from "./workers.ts";

export interface NodeMarker {
  alias: string;
  nonce: string;
  /** Path relative to the worker's checkout: the `read` tool's argument. */
  path: string;
  /** The file on the node (in placement.remoteWorkspaceDir). */
  file: string;
  /** The file's content (one line): the nonce and the node's alias. */
  text: string;
  /** The message to send: the default model script turns it into a `read` of the marker. */
  message: string;
  /** The scripted model's answer when the read ran in the node's checkout. */
  reply: string;
  /** The placement's worker environment, which the node's worker.launch.v1 must name. */
  environmentId?: string;
}

/**
 * Write a marker file only into the node's checkout of `placement` and return the message that
 * makes the worker read it. `note` is appended to the message (it shows in logs and transcripts).
 * Plant a fresh marker for every turn: the node may hand its checkout back to the gateway after a turn.
 */
export async function plantNodeMarker(lab: Lab, alias: string, placement: Placement, opts: { note?: string } = {}): Promise<NodeMarker> {
  const dir = placement.remoteWorkspaceDir;
  assert.ok(dir, `placement ${placement.state} names no remoteWorkspaceDir to plant a node-only marker in`);
  const nonce = uniqueName("mark");
  const path = `fleetlab-marker-${nonce}.txt`;
  const text = `${nonce} written only on ${alias}`;
  const file = `${dir}/${path}`;
  // The engine failing to run the command is the lab's problem (unknown); the command failing
  // (no such checkout on the node) is what OpenClaw left there (fail).
  const r = await lab.exec(alias, ["sh", "-c", 'printf "%s\\n" "$1" > "$2"', "sh", text, file]).catch((err: Error) => {
    throw new LabInfraError(`could not run a command in ${alias} to plant the node-only marker: ${err.message}`, { cause: err });
  });
  assert.equal(r.exitCode, 0, `planting the node-only marker in ${alias}'s checkout ${dir} failed: ${(r.stderr || r.stdout).trim().slice(0, 400)}`);
  const message = `fleetlab-call read {"path":"${path}"} ${nonce}${opts.note ? ` ${opts.note}` : ""}`;
  return { alias, nonce, path, file, text, message, reply: `fleetlab-ok: read returned: ${text}`, environmentId: placement.environmentId };
}

export interface LaunchSeen {
  seq: number;
  t: number;
  conn: string;
  launchId?: string;
  environmentId?: string;
}

export interface TurnProof {
  holds: boolean;
  /** Stable across runs (ids and tokens normalised): fit for a check's observed value. */
  observed: {
    reply: "node-only marker" | "none" | string;
    launches: number;
    launchAfterMark?: boolean;
  };
  /** Everything the proof rests on, for the scenario's evidence. */
  evidence: { alias: string; file: string; markerText: string; reply: string | null; tapSince: number; launches: LaunchSeen[]; otherLaunches: number; launchAfter?: number };
}

/**
 * Judge whether a turn ran on `alias`: its reply carries the node-only marker text (the exact
 * scripted answer) AND worker.launch.v1 for the marker's placement reached the node's tap after
 * `tapSince`. `launches` demands exactly that many such launches (default: at least one);
 * `launchAfter` (a tap seq, e.g. the node's reconnect) demands the last one come after it.
 * `reply` is the turn's final text, undefined when the turn gave none.
 */
export async function proveTurnOnNode(lab: Lab, o: { alias: string; marker: NodeMarker; reply: string | undefined; tapSince: number; launches?: number; launchAfter?: number }): Promise<TurnProof> {
  let frames: Frame[];
  try {
    frames = (await wireSummary(lab, o.alias, o.tapSince)).launches;
  } catch (err) {
    throw new LabInfraError(`could not read ${o.alias}'s wire tap for the proof that the turn ran there: ${(err as Error).message}`, { cause: err });
  }
  return judgeTurnOnNode(frames, o);
}

/** The judging half of proveTurnOnNode, over the worker.launch.v1 frames the tap saw since `tapSince`. */
export function judgeTurnOnNode(frames: Frame[], o: { alias: string; marker: NodeMarker; reply: string | undefined; tapSince: number; launches?: number; launchAfter?: number }): TurnProof {
  const seen = frames.map(launchSeen);
  const mine = mineOf(seen, o.marker);
  const { holds, observed } = turnOnNode({ alias: o.alias, marker: o.marker, reply: o.reply ?? null, launches: seen, launchCount: o.launches, launchAfter: o.launchAfter });
  return {
    holds,
    observed,
    evidence: { alias: o.alias, file: o.marker.file, markerText: o.marker.text, reply: o.reply ?? null, tapSince: o.tapSince, launches: mine, otherLaunches: seen.length - mine.length, launchAfter: o.launchAfter },
  };
}

/**
 * What the proof that a turn ran on a node reads, as a history keeps it (JSON, lab/judge/history.ts):
 * the launches the node's tap saw, the marker, the reply and the turn's error. turnOnNode judges it.
 */
export interface TurnSeen {
  alias: string;
  marker: Pick<NodeMarker, "nonce" | "reply" | "environmentId">;
  reply: string | null;
  launches: LaunchSeen[];
  /** Exactly this many launches for the marker's placement (default: at least one). */
  launchCount?: number;
  /** A tap seq the last launch must come after. */
  launchAfter?: number;
  /** The turn's error when it gave no reply. */
  error?: string;
}

function mineOf(seen: LaunchSeen[], marker: TurnSeen["marker"]): LaunchSeen[] {
  return seen.filter((l) => !marker.environmentId || l.environmentId === marker.environmentId);
}

/**
 * Did the turn run on the node (a pure check over what was seen): its reply carries the node-only
 * marker text AND worker.launch.v1 for the marker's placement reached the node's tap (exactly
 * `launchCount` of them when given; the last after `launchAfter` when given). `observed` is stable
 * across runs (ids and tokens normalised), with the turn's error when it gave no reply.
 */
export function turnOnNode(s: TurnSeen): { holds: boolean; observed: TurnProof["observed"] & { error?: string } } {
  const mine = mineOf(s.launches, s.marker);
  const last = mine.at(-1);
  const reply = s.reply === null ? "none" : s.reply === s.marker.reply ? "node-only marker" : s.reply.replaceAll(s.marker.nonce, "<nonce>");
  const observed: TurnProof["observed"] & { error?: string } = { reply, launches: mine.length };
  if (s.launchAfter !== undefined) observed.launchAfterMark = !!last && last.seq > s.launchAfter;
  const holds = reply === "node-only marker" && (s.launchCount === undefined ? mine.length >= 1 : mine.length === s.launchCount) && observed.launchAfterMark !== false;
  if (s.error !== undefined) observed.error = s.error;
  return { holds, observed };
}

/**
 * What a proof read, as a history keeps it (ctx.observe): turnOnNode(seen) judges it again, as
 * the declared check after the body. For a body that planted its marker and proved the turn
 * itself (proveTurnOnNode); provenWorkerTurn gives it as `seen`.
 */
export function turnSeen(o: { alias: string; marker: NodeMarker; reply: string | undefined; launches?: number; launchAfter?: number; error?: string }, proof: TurnProof): TurnSeen {
  return {
    alias: o.alias,
    marker: { nonce: o.marker.nonce, reply: o.marker.reply, ...(o.marker.environmentId ? { environmentId: o.marker.environmentId } : {}) },
    reply: o.reply ?? null,
    launches: [...proof.evidence.launches],
    ...(o.launches !== undefined ? { launchCount: o.launches } : {}),
    ...(o.launchAfter !== undefined ? { launchAfter: o.launchAfter } : {}),
    ...(o.error !== undefined ? { error: o.error } : {}),
  };
}

export interface ProvenTurn {
  message: string;
  text?: string;
  /** The turn's error (it gave no reply). */
  error?: string;
  ms?: number;
  proof: TurnProof;
  /** For a check: the proof's observed value, with the turn's error if it failed. */
  observed: TurnProof["observed"] & { error?: string };
  /** What the proof read, for a history (ctx.observe): turnOnNode(seen) judges it again. */
  seen: TurnSeen;
}

/**
 * One worker turn in a placed session, proven to run on `alias`: a marker planted in the
 * session's current placement (sessions.describe), the turn (its failure is an observation, not
 * a throw), and the proof. Observe `t.seen`; a declared check judges it with `turnOnNode(h.x)`.
 */
export async function provenWorkerTurn(lab: Lab, key: string, alias: string, opts: { note?: string; timeoutMs?: number } = {}): Promise<ProvenTurn> {
  const placement = await placementOf(lab, key);
  assert.ok(placement, `session ${key} has no placement to plant a node-only marker in`);
  const marker = await plantNodeMarker(lab, alias, placement, { note: opts.note });
  const tapSince = await lab.tap(alias).seq();
  const turn = await workerTurn(lab, key, marker.message, opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}).then(
    (r) => ({ text: r.text, ms: r.durationMs }),
    (err: Error) => ({ error: err.message }),
  );
  const reply = "text" in turn ? turn.text : undefined;
  const proof = await proveTurnOnNode(lab, { alias, marker, reply, tapSince });
  const seen = turnSeen({ alias, marker, reply, ...("error" in turn ? { error: turn.error } : {}) }, proof);
  return { message: marker.message, ...turn, proof, observed: "error" in turn ? { ...proof.observed, error: turn.error } : proof.observed, seen };
}

/** The launch's ids from its params (unknown when the frame was cut short). */
function launchSeen(f: Frame): LaunchSeen {
  const { launchId, environmentId } = launchOf(f);
  return { seq: f.seq, t: f.t, conn: f.conn, launchId, environmentId };
}
