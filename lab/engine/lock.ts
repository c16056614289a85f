// One build of a thing at a time, whoever asks: lanes of one run, shards, two `make lab`s at
// once. On a fresh machine both lanes of a run built the same base image at once (258 s each
// on 2 cores) and then ran `npm install openclaw` into one staging folder, which broke one of
// them. A lock is a file in the lab's shared cache (lab/core/paths.ts), created exclusively ('wx'), naming its
// owner (pid, the pid's start time, host); inside one process the callers queue on a promise
// first, so the file is only contended between processes. A lock whose owner died (killed
// outright; judged as cleanup.ts judges a run's owner: /proc state and start time) is taken over.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ownerAlive, procStat } from "./cleanup.ts";
import { step, stepStatus } from "../core/log.ts";
import { CACHE } from "../core/paths.ts";
import { waitFor } from "../core/wait.ts";

/** In the shared cache: clones on one machine share one engine and its image tags. */
export const LOCKS = path.join(CACHE, "locks");

interface Owner {
  pid: number;
  start?: number;
  host: string;
  what: string;
  since: string;
}

const inProcess = new Map<string, Promise<unknown>>();

/** A lock file's name for a key (image tags and versions hold ':' and '/'). */
export function lockFile(key: string, dir = LOCKS): string {
  return path.join(dir, `${key.replace(/[^A-Za-z0-9._-]+/g, "_")}.lock`);
}

function readOwner(file: string): Owner | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as Owner;
  } catch {
    return undefined; // gone meanwhile, or being written: try again
  }
}

/** Take the lock file if free (or its owner is dead); the owner that holds it otherwise. */
export function tryLock(file: string, what: string): { taken: true } | { taken: false; owner: Owner | undefined } {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const me: Owner = { pid: process.pid, start: procStat(process.pid)?.start, host: os.hostname(), what, since: new Date().toISOString() };
  try {
    fs.writeFileSync(file, JSON.stringify(me), { flag: "wx" });
    return { taken: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const owner = readOwner(file);
  // Only an owner on this host can be judged dead; a file unreadable for long is judged by its age.
  const dead = owner ? owner.host === os.hostname() && !ownerAlive(owner.pid, owner.start) : Date.now() - (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) > 10_000;
  if (dead) {
    fs.rmSync(file, { force: true });
    return tryLock(file, what);
  }
  return { taken: false, owner };
}

/**
 * Run `fn` holding the lock `key`: callers of this process one after another, other processes
 * waiting for the file (shown as a step: who holds it and for what). `fn` should check again
 * whether its work is still to do: the holder before it may have done it.
 */
export async function withLock<T>(key: string, what: string, fn: () => Promise<T>, opts: { timeoutMs?: number; dir?: string } = {}): Promise<T> {
  const before = inProcess.get(key) ?? Promise.resolve();
  const mine = before.catch(() => {}).then(() => holdFile(lockFile(key, opts.dir), what, fn, opts.timeoutMs ?? 45 * 60_000));
  const tail = mine.catch(() => {});
  inProcess.set(key, tail);
  void tail.then(() => {
    if (inProcess.get(key) === tail) inProcess.delete(key);
  });
  return mine;
}

async function holdFile<T>(file: string, what: string, fn: () => Promise<T>, timeoutMs: number): Promise<T> {
  let first = tryLock(file, what);
  if (!first.taken) {
    const o = first.owner;
    await step(`waiting for another fleetlab process${o ? ` (pid ${o.pid}, since ${o.since})` : ""} that is ${o?.what ?? "setting up"}`, () =>
      waitFor(
        `the lock ${path.basename(file)}`,
        () => {
          const r = tryLock(file, what);
          if (!r.taken) stepStatus(r.owner ? `held by pid ${r.owner.pid}: ${r.owner.what}` : undefined);
          return r.taken;
        },
        { timeoutMs, intervalMs: 500 },
      ),
    );
    first = { taken: true };
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}
