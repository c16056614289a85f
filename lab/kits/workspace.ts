// The repository a worker session starts from: seeded on the host, pushed to the lab's git
// server, cloned inside the gateway container (the checkout sessions.create is given; its
// origin is what a node fetches), and what the git server saw each member fetch.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readSeedFiles, seedWorkspace, publish, smartUrl, dumbUrl, type SeedFiles } from "../clients/git.ts";
import type { Lab } from "../topology/lab.ts";
import { execOnMember, type PublishedWorkspace } from "./inside-node.ts";

/** Where the gateway-side checkouts that sessions start from are cloned. */
export const GATEWAY_WORKSPACES = "/home/lab/workspaces";

export type { PublishedWorkspace };

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
    await execOnMember(lab, lab.spec.gateway.alias, ["git", "clone", "--quiet", labUrl, gatewayCheckout]);
    const head = (await execOnMember(lab, lab.spec.gateway.alias, ["git", "-C", gatewayCheckout, "rev-parse", "HEAD"])).trim();
    if (head !== sha) throw new Error(`the gateway checkout of ${labUrl} is at ${head}, not the published ${sha}`);
    return { repo: opts.repo, protocol, sha, files, labUrl, gatewayCheckout };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Git HTTP requests the git container saw from a member (by its lab IP) for one repo. */
export async function gitRequestsFrom(lab: Lab, alias: string, repo: string, since = 0): Promise<{ method: string; path: string; status: number }[]> {
  const ip = lab.member(alias).ip;
  return (await lab.git.log(since))
    .filter((e) => e.remote === ip && (e.path.startsWith(`/smart/${repo}.git/`) || e.path.startsWith(`/dumb/${repo}.git/`)))
    .map((e) => ({ method: e.method, path: e.path, status: e.status }));
}
