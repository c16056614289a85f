// Paired-worker helpers for scenarios: publish a workspace repo, create a session on it and
// dispatch it to a node, run worker turns, and look inside node containers at what the
// worker path left there (installed bundle, worker checkout, worker processes).
//
// Where things live with openclaw@2026.9.6 (measured; the node's OPENCLAW_STATE_DIR is
// /home/lab/.openclaw on its state volume):
//   bundle     <state>/node-host/gateway-<32 hex>/bundles/<sha256>/  (bootstrap-receipt.json,
//              worker.mjs, ...); <sha256> = placement.workerBundleHash
//   checkout   placement.remoteWorkspaceDir =
//              <state>/node-host/gateway-<32 hex>/workspaces/<16 hex>/<32 hex>/<owner epoch>,
//              a partial clone (filter blob:none) from the gateway checkout's origin, HEAD
//              detached at the published commit
//   worker     one process per turn: node <bundle>/worker.mjs --internal-worker-ipc
//              --internal-worker-session, cwd = the checkout
import crypto from "node:crypto";
import type { Frame, HttpExchange } from "./clients/tap.ts";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chatTurn, listNodes, type AgentTurnOptions, type AgentTurnResult, type NodeEntry } from "./clients/operator.ts";
import { readSeedFiles, seedWorkspace, publish, smartUrl, dumbUrl, type SeedFiles } from "./clients/git.ts";
import { createSession, describeSession, dispatchSession, reclaimSession, type DispatchTarget, type Placement, type SessionsCreateResult, type SessionsDispatchResult } from "./clients/sessions.ts";
import type { HeldRequest } from "./clients/model.ts";
import type { Lab } from "./topology/lab.ts";
import { waitUntil } from "./topology/wait.ts";

/** OPENCLAW_STATE_DIR of gateway and node containers (docker/openclaw/Dockerfile). */
export const STATE_DIR = "/home/lab/.openclaw";
/** Where the gateway-side checkouts that sessions start from are cloned. */
export const GATEWAY_WORKSPACES = "/home/lab/workspaces";

/** A short unique name for repos, session keys and message tokens. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${crypto.randomBytes(3).toString("hex")}`;
}

export function saveJson(file: string, data: unknown): void {
  fs.writeFileSync(file, JSON.stringify(data, null, 2) + "\n");
}

/** Run a command in a member's container (as its user); throws with its output unless it exits 0. */
export async function execOk(lab: Lab, alias: string, cmd: string[]): Promise<string> {
  const r = await lab.exec(alias, cmd);
  if (r.exitCode !== 0) throw new Error(`in ${alias}: '${cmd.join(" ")}' exited ${r.exitCode}: ${(r.stderr || r.stdout).trim().slice(0, 800)}`);
  return r.stdout;
}

// ------------------------------------------------------------------------- workspaces

export interface PublishedWorkspace {
  repo: string;
  protocol: "smart" | "dumb";
  /** The published commit. */
  sha: string;
  files: SeedFiles;
  /** The URL inside the lab network (the checkout's origin, what nodes fetch from). */
  labUrl: string;
  /** The gateway-side checkout a session is created on. */
  gatewayCheckout: string;
}

/**
 * Seed a repo on the host (the default seed plus a file naming the repo, so every repo has
 * its own commit), push it to the git container by its IP (smart HTTP; a push creates the
 * repo and refreshes its dumb-HTTP view), then clone it inside the gateway container from
 * the git container by name over `protocol`. That clone's origin is what the node fetches.
 */
export async function publishWorkspace(lab: Lab, opts: { repo: string; protocol?: "smart" | "dumb"; files?: SeedFiles }): Promise<PublishedWorkspace> {
  const protocol = opts.protocol ?? "smart";
  const files = opts.files ?? { ...(await readSeedFiles()), "fleetlab-repo.txt": `${opts.repo}\n` };
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-ws-"));
  try {
    const seeded = await seedWorkspace(path.join(tmp, opts.repo), files);
    const sha = await publish(path.join(tmp, opts.repo), lab.git.smartUrl(opts.repo));
    if (sha !== seeded) throw new Error(`published ${sha}, seeded ${seeded}`);
    const inLab = `http://${lab.spec.git.alias}:${lab.spec.git.port}`;
    const labUrl = protocol === "smart" ? smartUrl(inLab, opts.repo) : dumbUrl(inLab, opts.repo);
    const gatewayCheckout = `${GATEWAY_WORKSPACES}/${opts.repo}`;
    await execOk(lab, lab.spec.gateway.alias, ["git", "clone", "--quiet", labUrl, gatewayCheckout]);
    const head = (await execOk(lab, lab.spec.gateway.alias, ["git", "-C", gatewayCheckout, "rev-parse", "HEAD"])).trim();
    if (head !== sha) throw new Error(`the gateway checkout of ${labUrl} is at ${head}, not the published ${sha}`);
    return { repo: opts.repo, protocol, sha, files, labUrl, gatewayCheckout };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

// --------------------------------------------------------------------------- sessions

/** sessions.create on the gateway checkout with a managed worktree (what dispatch requires). */
export async function createWorkerSession(lab: Lab, ws: PublishedWorkspace, opts: { key?: string; label?: string } = {}): Promise<SessionsCreateResult> {
  return createSession(lab.operator.client, { key: opts.key ?? `agent:main:${uniqueName("fleetlab")}`, label: opts.label, cwd: ws.gatewayCheckout, worktree: true });
}

/** The node.list entry of a node host by its lab alias (= its display name). */
export async function nodeByAlias(lab: Lab, alias: string): Promise<NodeEntry> {
  const nodes = await listNodes(lab.operator.client);
  const n = nodes.find((x) => x.displayName === alias);
  if (!n) throw new Error(`node ${alias} is missing from node.list (seen: ${nodes.map((x) => x.displayName).join(", ")})`);
  return n;
}

/** Poll node.list until the node's entry satisfies `ok`; returns that entry. */
export async function waitForNode(lab: Lab, alias: string, what: string, ok: (n: NodeEntry) => boolean, timeoutMs = 30_000): Promise<NodeEntry> {
  let last: NodeEntry | undefined;
  return waitUntil(
    `node ${alias}: ${what}`,
    async () => {
      last = await nodeByAlias(lab, alias);
      return ok(last) ? last : undefined;
    },
    { timeoutMs, intervalMs: 200, lastState: () => `last node.list entry: ${JSON.stringify(summarizeNode(last))}` },
  );
}

/**
 * Wait until a node can take worker turns: connected, approved, hosting sessions, with its
 * worker slots declared and all free. Lab.up returns once nodes are paired and connected;
 * with 2026.9.6 the session-host declaration (sessionHost, workerSlots) follows a few
 * seconds later, from the node's runner inventory.
 */
export async function waitForWorkerHost(lab: Lab, alias: string, timeoutMs = 60_000): Promise<NodeEntry> {
  return waitForNode(lab, alias, "connected, approved session host with all worker slots free", (n) => n.connected && n.approvalState === "approved" && n.sessionHost === true && slotsFree(n) && n.workerSlots!.total > 0, timeoutMs);
}

export const slotsFree = (n: NodeEntry): boolean => !!n.workerSlots && n.workerSlots.available === n.workerSlots.total;

/** The node.list fields the worker path is about. */
export function summarizeNode(n: NodeEntry | undefined): unknown {
  if (!n) return undefined;
  return { name: n.displayName, nodeId: n.nodeId, approvalState: n.approvalState, paired: n.paired, connected: n.connected, sessionHost: n.sessionHost, workerSlots: n.workerSlots, workerBundle: n.workerBundle };
}

export interface Dispatched extends SessionsDispatchResult {
  ms: number;
}

/** sessions.dispatch to a node by alias (as `deviceId` = its nodeId), or to `"auto"` (autoDevice). */
export async function dispatchTo(lab: Lab, key: string, to: string | "auto"): Promise<Dispatched> {
  const target: DispatchTarget = to === "auto" ? { autoDevice: true } : { deviceId: (await nodeByAlias(lab, to)).nodeId };
  const t0 = performance.now();
  const r = await dispatchSession(lab.operator.client, key, target);
  return { ...r, ms: Math.round(performance.now() - t0) };
}

/** A session's current placement (sessions.describe), or undefined if it was never placed. */
export async function placementOf(lab: Lab, key: string): Promise<Placement | undefined> {
  return (await describeSession(lab.operator.client, key)).placement;
}

export async function reclaim(lab: Lab, key: string): Promise<Placement> {
  return (await reclaimSession(lab.operator.client, key)).placement;
}

/** One worker turn in a placed session (chat.send + agent.wait). */
export function workerTurn(lab: Lab, key: string, message: string, opts: Omit<AgentTurnOptions, "sessionKey" | "agentId"> = {}): Promise<AgentTurnResult> {
  return chatTurn(lab.operator.client, key, message, { timeoutMs: 120_000, ...opts });
}

/** The default model script's answer to `message`: its first eight words after "fleetlab-ok: ". */
export function expectedReply(message: string): string {
  return `fleetlab-ok: ${message.split(/\s+/).filter(Boolean).slice(0, 8).join(" ")}`;
}

export interface HeldTurn {
  /** The model request the turn is held at (one delta streamed). */
  held: HeldRequest;
  /** Release the model request and wait for the turn's result. */
  finish(): Promise<AgentTurnResult>;
  /** The turn's promise (already guarded against unhandled rejection). */
  turn: Promise<AgentTurnResult>;
}

/**
 * Start a worker turn and hold its model request (matched by `token`, which `message` must
 * contain) so the worker stays up while the scenario looks at the node. Always call
 * finish(), or release the model request, before the scenario ends.
 */
export async function startHeldTurn(lab: Lab, key: string, message: string, token: string, opts: { heldWithinMs?: number; turnTimeoutMs?: number } = {}): Promise<HeldTurn> {
  if (!message.includes(token)) throw new Error(`startHeldTurn: message must contain the token '${token}'`);
  await lab.model.hold({ match: { contains: token }, count: 1 });
  const turn = workerTurn(lab, key, message, { timeoutMs: opts.turnTimeoutMs ?? 180_000 });
  turn.catch(() => {}); // judged by whoever awaits it
  let held: HeldRequest;
  try {
    held = await Promise.race([
      lab.model.waitForHeld(opts.heldWithinMs ?? 60_000, (h) => h.userText.includes(token)),
      turn.then((r) => {
        throw new Error(`the turn ended (${r.status}: ${r.text}) before its model request was held`);
      }),
    ]);
  } catch (err) {
    await lab.model.release().catch(() => {});
    throw err;
  }
  return {
    held,
    turn,
    finish: async () => {
      await lab.model.release(held.id);
      return turn;
    },
  };
}

// ---------------------------------------------------------- inside a node container

export async function readNodeFile(lab: Lab, alias: string, file: string): Promise<string> {
  return execOk(lab, alias, ["cat", file]);
}

/** Entry names of a directory inside a node container (sorted, without . and ..). */
export async function listNodeDir(lab: Lab, alias: string, dir: string): Promise<string[]> {
  return (await execOk(lab, alias, ["ls", "-1A", dir])).split("\n").filter(Boolean).sort();
}

/** `git -C dir <args>` inside a node container; returns trimmed stdout. */
export async function nodeGit(lab: Lab, alias: string, dir: string, args: string[]): Promise<string> {
  return (await execOk(lab, alias, ["git", "-C", dir, ...args])).trim();
}

export interface BundleDir {
  /** Absolute path: <state>/node-host/gateway-<id>/bundles/<sha256>. */
  dir: string;
  /** The directory name, the bundle's content hash. */
  hash: string;
  inode: number;
  /** mtime of bootstrap-receipt.json (seconds since the epoch). */
  receiptMtime: number;
  receipt: { bundleHash?: string; openclawVersion?: string; [k: string]: unknown } | undefined;
  files: string[];
}

/**
 * Worker bundles installed on a node: every directory under <state>/node-host/∗/bundles/,
 * with its receipt and identity (inode, receipt mtime) to tell a reinstall from reuse.
 * `strayReceipts` lists bootstrap receipts anywhere else under the node's home (should be none).
 */
export async function installedBundles(lab: Lab, alias: string): Promise<{ bundles: BundleDir[]; strayReceipts: string[] }> {
  const script = [
    `for d in ${STATE_DIR}/node-host/*/bundles/*; do`,
    `  [ -d "$d" ] || continue`,
    `  r="$d/bootstrap-receipt.json"`,
    `  printf 'B\\t%s\\t%s\\t%s\\t%s\\t%s\\n' "$d" "$(stat -c %i "$d")" "$( [ -f "$r" ] && stat -c %Y "$r" || echo 0)" "$(ls -1A "$d" | tr '\\n' ' ')" "$( [ -f "$r" ] && tr -d '\\n' < "$r")"`,
    `done`,
    `find /home/lab -name bootstrap-receipt.json -not -path "${STATE_DIR}/node-host/*/bundles/*" 2>/dev/null | sed 's/^/S\\t/'`,
  ].join("\n");
  const out = await execOk(lab, alias, ["sh", "-c", script]);
  const bundles: BundleDir[] = [];
  const strayReceipts: string[] = [];
  for (const line of out.split("\n").filter(Boolean)) {
    const [kind, ...f] = line.split("\t");
    if (kind === "S") strayReceipts.push(f[0]!);
    if (kind !== "B") continue;
    const [dir, inode, mtime, files, receipt] = f as [string, string, string, string, string | undefined];
    let parsed: BundleDir["receipt"];
    try {
      parsed = receipt ? (JSON.parse(receipt) as BundleDir["receipt"]) : undefined;
    } catch {
      parsed = { unparsable: receipt };
    }
    bundles.push({ dir, hash: path.posix.basename(dir), inode: Number(inode), receiptMtime: Number(mtime), receipt: parsed, files: files.split(" ").filter(Boolean).sort() });
  }
  return { bundles, strayReceipts };
}

export interface WorkerProcess {
  pid: number;
  cwd: string;
  args: string;
}

/** Worker processes running on a node now (`... worker.mjs --internal-worker-session`). */
export async function workerProcesses(lab: Lab, alias: string): Promise<WorkerProcess[]> {
  // The bracket keeps this shell's own command line from matching the pattern.
  const script = `for p in $(pgrep -f -- '[-]-internal-worker-session'); do printf '%s\\t%s\\t%s\\n' "$p" "$(readlink /proc/$p/cwd)" "$(tr '\\0' ' ' < /proc/$p/cmdline)"; done`;
  const out = await execOk(lab, alias, ["sh", "-c", script]);
  return out
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [pid, cwd, args] = l.split("\t") as [string, string, string];
      return { pid: Number(pid), cwd, args: args.trim() };
    });
}

export interface WorkerCheckout {
  dir: string;
  head: string;
  origin: string;
  /** Tracked files at HEAD. */
  files: string[];
  /** Content of each file of the published workspace as found in the checkout (missing: null). */
  contents: Record<string, string | null>;
}

/** The worker's checkout on the node (placement.remoteWorkspaceDir), read with git inside the node. */
export async function workerCheckout(lab: Lab, alias: string, placement: Placement, ws: PublishedWorkspace): Promise<WorkerCheckout> {
  const dir = placement.remoteWorkspaceDir;
  if (!dir) throw new Error(`placement ${placement.state} names no remoteWorkspaceDir`);
  const head = await nodeGit(lab, alias, dir, ["rev-parse", "HEAD"]);
  const origin = await nodeGit(lab, alias, dir, ["remote", "get-url", "origin"]);
  const files = (await nodeGit(lab, alias, dir, ["ls-files"])).split("\n").filter(Boolean).sort();
  const contents: Record<string, string | null> = {};
  for (const rel of Object.keys(ws.files)) {
    const r = await lab.exec(alias, ["cat", `${dir}/${rel}`]);
    contents[rel] = r.exitCode === 0 ? r.stdout : null;
  }
  return { dir, head, origin, files, contents };
}

/** Git HTTP requests the git container saw from a member (by its lab IP) for one repo. */
export async function gitRequestsFrom(lab: Lab, alias: string, repo: string, since = 0): Promise<{ method: string; path: string; status: number }[]> {
  const ip = lab.member(alias).ip;
  return (await lab.git.log(since))
    .filter((e) => e.remote === ip && (e.path.startsWith(`/smart/${repo}.git/`) || e.path.startsWith(`/dumb/${repo}.git/`)))
    .map((e) => ({ method: e.method, path: e.path, status: e.status }));
}

/** What one node's wire tap saw of the worker path since `since` (a tap seq). */
export interface WireSummary {
  bundleInstalls: Frame[];
  launches: Frame[];
  bundleDownloads: HttpExchange[];
  workerSockets: HttpExchange[];
  /** Every node.runnerInventory.update the node sent, with the gateway's answer. */
  inventory: { seq: number; ok: boolean | undefined; errorCode?: string; errorDetailsCode?: string; workerHost?: unknown; protocolFeatures?: unknown }[];
}

export async function wireSummary(lab: Lab, alias: string, since = 0): Promise<WireSummary> {
  const tap = lab.tap(alias);
  const [frames, http] = await Promise.all([tap.frames({ since }), tap.http({ since })]);
  const invokes = (command: string) => frames.filter((f) => f.dir === "gw->node" && f.event === "node.invoke.request" && f.command === command);
  const inventory = frames
    .filter((f) => f.dir === "node->gw" && f.method === "node.runnerInventory.update")
    .map((req) => {
      const res = frames.find((f) => f.dir === "gw->node" && f.type === "res" && f.id === req.id && f.conn === req.conn);
      let params: { workerHost?: unknown; protocolFeatures?: unknown } = {};
      try {
        params = (JSON.parse(req.text ?? "{}") as { params?: typeof params }).params ?? {};
      } catch {
        /* a truncated frame: fields stay unknown */
      }
      return { seq: req.seq, ok: res?.ok, errorCode: res?.errorCode, errorDetailsCode: res?.errorDetailsCode, workerHost: params.workerHost, protocolFeatures: params.protocolFeatures };
    });
  return {
    bundleInstalls: invokes("worker.bundle.install.v1"),
    launches: invokes("worker.launch.v1"),
    bundleDownloads: http.filter((h) => h.path.startsWith("/__openclaw__/worker-bundle/")),
    workerSockets: http.filter((h) => h.path.startsWith("/__openclaw__/worker") && !!h.upgrade),
    inventory,
  };
}
