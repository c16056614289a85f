// Host-side git helpers for the lab: seed a workspace repo, publish it to the git-http
// server, clone it back, and talk to that server's control API (its replies are defined once,
// in docker/git-http/wire.ts).
//
// Every git run here is hermetic (no system/global config, no prompts, fixed identity), so
// a seed commit has the same id on every machine and a developer's ~/.gitconfig (signing,
// hooksPath, templates, proxies) cannot leak into a lab run.

import { access, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { simpleGit, type SimpleGit } from "simple-git";
import type { AccessLogEntry, CreatedRepo, GitHttpControlApi, RepoInfo } from "../../docker/git-http/wire.ts";
import { ControlClient } from "./control.ts";
import { env as envVar } from "../core/settings.ts";

export type { AccessLogEntry, CreatedRepo, RepoInfo } from "../../docker/git-http/wire.ts";

/** The default workspace seed: a root README.md and a nested src/notes/plan.md. */
export const WORKSPACE_SEED_DIR = fileURLToPath(new URL("../../fixtures/workspace-seed/", import.meta.url));

/** Author, committer and time of seed commits; fixed so the commit id is deterministic. */
export const SEED_IDENTITY = {
  name: "fleetlab seed",
  email: "seed@fleetlab.invalid",
  date: "1735689600 +0000", // 2025-01-01T00:00:00Z, git's internal "<unix> <tz>" format
} as const;

export const SEED_MESSAGE = "fleetlab: workspace seed";
export const DEFAULT_BRANCH = "main";

/** Repo-relative POSIX path -> file content. */
export type SeedFiles = Record<string, string>;

function hermeticGit(baseDir: string): SimpleGit {
  const env: Record<string, string> = {
    PATH: envVar("PATH") ?? "/usr/bin:/bin",
    HOME: envVar("HOME") ?? "/tmp",
    LANG: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: SEED_IDENTITY.name,
    GIT_AUTHOR_EMAIL: SEED_IDENTITY.email,
    GIT_AUTHOR_DATE: SEED_IDENTITY.date,
    GIT_COMMITTER_NAME: SEED_IDENTITY.name,
    GIT_COMMITTER_EMAIL: SEED_IDENTITY.email,
    GIT_COMMITTER_DATE: SEED_IDENTITY.date,
  };
  // simple-git strips GIT_* variables unless named in allowEnvironment, and refuses config
  // path variables unless allowed; ours points global config at /dev/null, i.e. loads none.
  return simpleGit({ baseDir, allowEnvironment: Object.keys(env), unsafe: { allowUnsafeConfigPaths: true } }).env(env);
}

async function exists(p: string): Promise<boolean> {
  return access(p).then(() => true, () => false);
}

/** Reads a fixture folder into SeedFiles (sorted, POSIX separators). */
export async function readSeedFiles(folder: string = WORKSPACE_SEED_DIR): Promise<SeedFiles> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  const files: SeedFiles = {};
  const rels = entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(folder, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
    .sort();
  for (const rel of rels) files[rel] = await readFile(path.join(folder, rel), "utf8");
  if (rels.length === 0) throw new Error(`seed folder ${folder} has no files`);
  return files;
}

/**
 * Creates a git repo in `dir` (created if missing, must not already be a repo) holding
 * `files` (default: fixtures/workspace-seed/), committed on `main` with a fixed author and
 * date. Returns the commit sha, which depends only on the files.
 */
export async function seedWorkspace(dir: string, files?: SeedFiles): Promise<string> {
  const content = files ?? (await readSeedFiles());
  await mkdir(dir, { recursive: true });
  if (await exists(path.join(dir, ".git"))) throw new Error(`seedWorkspace: ${dir} is already a git repository`);
  for (const [rel, text] of Object.entries(content)) {
    if (path.isAbsolute(rel) || rel.split("/").includes("..")) throw new Error(`seedWorkspace: bad path ${rel}`);
    const file = path.join(dir, ...rel.split("/"));
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  const git = hermeticGit(dir);
  await git.init(false, [`--initial-branch=${DEFAULT_BRANCH}`]);
  await git.raw(["add", "--all"]);
  await git.commit(SEED_MESSAGE);
  return (await git.revparse(["HEAD"])).trim();
}

/** Pushes the current commit of `dir` to `remoteUrl` as `branch`; returns the pushed sha. */
export async function publish(dir: string, remoteUrl: string, branch: string = DEFAULT_BRANCH): Promise<string> {
  const git = hermeticGit(dir);
  const sha = (await git.revparse(["HEAD"])).trim();
  await git.push(remoteUrl, `HEAD:refs/heads/${branch}`);
  return sha;
}

/** Clones `remoteUrl` (smart or dumb HTTP) into `dir`; returns the checked-out sha. */
export async function clone(remoteUrl: string, dir: string): Promise<string> {
  await mkdir(path.dirname(dir), { recursive: true });
  await hermeticGit(path.dirname(dir)).clone(remoteUrl, dir);
  return (await hermeticGit(dir).revparse(["HEAD"])).trim();
}

// ---------------------------------------------------------------- git-http control API

/** URL layout of docker/git-http/server.ts. `base` is e.g. http://git-http:8080. */
export const smartUrl = (base: string, repo: string): string => `${base.replace(/\/+$/, "")}/smart/${repo}.git`;
export const dumbUrl = (base: string, repo: string): string => `${base.replace(/\/+$/, "")}/dumb/${repo}.git`;

export class GitHttpControlError extends Error {}

/** The control API of docker/git-http; its replies are defined there (wire.ts). */
export class GitHttpControl extends ControlClient<GitHttpControlApi> {
  constructor(baseUrl: string) {
    // Listing runs git once per repo, creating a handful of times: generous.
    super(baseUrl, { name: "git-http", timeoutMs: 60_000, error: GitHttpControlError });
  }

  smartUrl(repo: string): string {
    return smartUrl(this.baseUrl, repo);
  }

  dumbUrl(repo: string): string {
    return dumbUrl(this.baseUrl, repo);
  }

  /** Creates an empty bare repo (idempotent: `created` is false if it already existed). */
  async createRepo(name: string): Promise<CreatedRepo> {
    return this.call("POST /_control/repos", { body: { name } });
  }

  async listRepos(): Promise<RepoInfo[]> {
    return (await this.call("GET /_control/repos")).repos;
  }

  /** Access log entries with seq > since (the server keeps the most recent 10 000). */
  async log(since = 0): Promise<AccessLogEntry[]> {
    return (await this.call("GET /_control/log", { query: { since } })).entries;
  }
}
