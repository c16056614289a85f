// What the worker path left inside a node host's container, read with commands run there:
// the installed worker bundle, the worker's checkout, worker processes.
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
import path from "node:path";
import type { SeedFiles } from "../clients/git.ts";
import type { Placement } from "../clients/sessions.ts";
import type { Lab } from "../topology/lab.ts";

/** OPENCLAW_STATE_DIR of gateway and node containers (docker/openclaw/Dockerfile). */
export const STATE_DIR = "/home/lab/.openclaw";

/** Run a command in any lab member's container (as its user); its stdout, or a throw with its output unless it exits 0. */
/** A repository published to the lab's git server and cloned in the gateway (lab/kits/workspace.ts publishes it). */
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

export async function execOnMember(lab: Lab, alias: string, cmd: string[]): Promise<string> {
  const r = await lab.exec(alias, cmd);
  if (r.exitCode !== 0) throw new Error(`in ${alias}: '${cmd.join(" ")}' exited ${r.exitCode}: ${(r.stderr || r.stdout).trim().slice(0, 800)}`);
  return r.stdout;
}

export async function readNodeFile(lab: Lab, alias: string, file: string): Promise<string> {
  return execOnMember(lab, alias, ["cat", file]);
}

/** Entry names of a directory inside a node container (sorted, without . and ..). */
export async function listNodeDir(lab: Lab, alias: string, dir: string): Promise<string[]> {
  return (await execOnMember(lab, alias, ["ls", "-1A", dir])).split("\n").filter(Boolean).sort();
}

/** `git -C dir <args>` inside a node container; returns trimmed stdout. */
export async function nodeGit(lab: Lab, alias: string, dir: string, args: string[]): Promise<string> {
  return (await execOnMember(lab, alias, ["git", "-C", dir, ...args])).trim();
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
  const out = await execOnMember(lab, alias, ["sh", "-c", script]);
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
  const out = await execOnMember(lab, alias, ["sh", "-c", script]);
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
