// Runs docker/git-http/server.ts on the host (no Docker) with the machine's git and drives
// it with the helpers the scenarios use: seed, push over smart HTTP, clone back over both
// smart and dumb HTTP.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { simpleGit } from "simple-git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clone, GitHttpControl, publish, readSeedFiles, SEED_IDENTITY, seedWorkspace } from "./git.ts";
import { listeningRecord, startServerProcess, type ServerProcess } from "../testing/server-process.ts";

const SERVER = fileURLToPath(new URL("../../docker/git-http/server.ts", import.meta.url));

let tmp: string;
let server: ServerProcess<{ port: number }>;
let control: GitHttpControl;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "fleetlab-git-"));
  // The server prints {"event":"listening","port":N} once bound, then a line per request.
  server = await startServerProcess(
    "git-http",
    SERVER,
    {
      GIT_HTTP_HOST: "127.0.0.1",
      GIT_HTTP_PORT: "0",
      GIT_ROOT: path.join(tmp, "srv"),
      // keep the developer's git config out of the server's git runs too
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
    },
    listeningRecord<{ port: number }>,
    { timeoutMs: 10_000, keepOutput: false },
  );
  control = new GitHttpControl(`http://127.0.0.1:${server.ready.port}`);
});

afterAll(async () => {
  await server?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const lastSeq = async () => (await control.log()).at(-1)?.seq ?? 0;

describe("git-http server with the lab git helpers", () => {
  it("is healthy and creates repos through the control API, idempotently", async () => {
    expect(await control.healthy()).toBe(true);
    const first = await control.createRepo("workspace");
    expect(first).toMatchObject({ created: true, name: "workspace", head: "refs/heads/main", headCommit: null, refs: {} });
    expect((await control.createRepo("workspace")).created).toBe(false);
    expect((await control.listRepos()).map((r) => r.name)).toContain("workspace");
    await expect(control.createRepo("../escape")).rejects.toThrow(/400 invalid repo name/);
  });

  it("seeds a workspace whose commit id depends only on its files", async () => {
    const a = await seedWorkspace(path.join(tmp, "seed-a"));
    const b = await seedWorkspace(path.join(tmp, "seed-b"));
    expect(a).toMatch(/^[0-9a-f]{40}$/);
    expect(b).toBe(a);
    // fixed dates, not the wall clock, so the id is the same on every machine and every run
    const dates = await simpleGit(path.join(tmp, "seed-a")).raw(["log", "-1", "--format=%at %ct %an"]);
    expect(dates.trim()).toBe(`1735689600 1735689600 ${SEED_IDENTITY.name}`);
  });

  it("pushes over smart HTTP and clones back over smart and dumb HTTP", async () => {
    const seed = await readSeedFiles();
    expect(Object.keys(seed)).toEqual(["README.md", "src/notes/plan.md"]);
    const sha = await seedWorkspace(path.join(tmp, "work"), seed);
    expect(await publish(path.join(tmp, "work"), control.smartUrl("workspace"), "main")).toBe(sha);

    const repo = (await control.listRepos()).find((r) => r.name === "workspace");
    expect(repo).toMatchObject({ head: "refs/heads/main", headCommit: sha, refs: { "refs/heads/main": sha } });

    const since = await lastSeq();
    for (const [kind, url] of [["smart", control.smartUrl("workspace")], ["dumb", control.dumbUrl("workspace")]]) {
      const dir = path.join(tmp, `clone-${kind}`);
      expect(await clone(url!, dir), `${kind} clone HEAD`).toBe(sha);
      for (const [rel, text] of Object.entries(seed)) {
        expect(await readFile(path.join(dir, rel), "utf8"), `${kind} clone ${rel}`).toBe(text);
      }
    }

    // The log proves both clones really went over the network, each the way it claims.
    const log = (await control.log(since)).filter((e) => e.agent.startsWith("git/"));
    expect(log.every((e) => e.remote === "127.0.0.1" || e.remote === "::ffff:127.0.0.1")).toBe(true);
    const hit = (method: string, re: RegExp) => log.find((e) => e.method === method && re.test(e.path) && e.status === 200);
    expect(hit("GET", /^\/smart\/workspace\.git\/info\/refs\?service=git-upload-pack$/)).toBeDefined();
    expect(hit("POST", /^\/smart\/workspace\.git\/git-upload-pack$/)?.bytes).toBeGreaterThan(0);
    expect(hit("GET", /^\/dumb\/workspace\.git\/info\/refs/)).toBeDefined();
    expect(hit("GET", new RegExp(`^/dumb/workspace\\.git/objects/${sha.slice(0, 2)}/${sha.slice(2)}$`))).toBeDefined();
  });

  it("creates a repo that does not exist yet on first push", async () => {
    const sha = await seedWorkspace(path.join(tmp, "fresh"), { "a.txt": "fresh\n" });
    await publish(path.join(tmp, "fresh"), control.smartUrl("team/fresh"));
    expect((await control.listRepos()).find((r) => r.name === "team/fresh")?.headCommit).toBe(sha);
    // and the post-update hook made it visible over dumb HTTP straight away
    expect(await clone(control.dumbUrl("team/fresh"), path.join(tmp, "clone-fresh"))).toBe(sha);
  });

  it("answers 404 with a clear message for an unknown repo", async () => {
    for (const route of ["/smart/missing.git/info/refs?service=git-upload-pack", "/dumb/missing.git/info/refs"]) {
      const res = await fetch(`${control.baseUrl}${route}`);
      expect(res.status, route).toBe(404);
      expect(await res.text(), route).toMatch(/repository not found: 'missing\.git' does not exist/);
    }
    await expect(clone(control.smartUrl("missing"), path.join(tmp, "clone-missing"))).rejects.toThrow(/not found/);
    expect((await control.listRepos()).map((r) => r.name)).not.toContain("missing");
  });
});
