import { fileURLToPath } from "node:url";
import os from "node:os";
import path from "node:path";
import { env } from "./settings.ts";

/** Repository root (this file sits in lab/core/, two levels below it). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** The lab's state folder: engine log, package cache, run evidence, operator identity. */
export const STATE = env("FLEETLAB_STATE") ?? path.join(ROOT, ".lab");
export const RUNS = path.join(STATE, "runs");
/**
 * What every clone on this machine can share, keyed so a wrong entry is never used: the npm
 * package per OpenClaw version (~650 MB), snapshots of paired state, capability probes, and the
 * set-up locks (lab/engine/lock.ts). Per user, outside the checkout, like npm's own cache:
 * FLEETLAB_CACHE, else $XDG_CACHE_HOME/fleetlab or ~/.cache/fleetlab; inside the state folder
 * when FLEETLAB_STATE names one (a runner container, a test's own state).
 */
export const CACHE =
  env("FLEETLAB_CACHE") ??
  (env("FLEETLAB_STATE") ? path.join(STATE, "cache") : path.join(env("XDG_CACHE_HOME") || path.join(os.homedir(), ".cache"), "fleetlab"));
export const DOCKER_DIR = path.join(ROOT, "docker");
export const FIXTURES = path.join(ROOT, "fixtures");
/**
 * The lab operator's device identity (Ed25519 key, 0600): shared by every clone of this user, so
 * snapshots of paired state (keyed by it) serve them all; a new one is made when it is missing.
 */
export const OPERATOR_DIR = path.join(CACHE, "operator");
/** The keys of scripted fleets paired at bring-up (spec.scripted.paired), one folder per prefix: kept so a snapshot's paired state finds the same devices. */
export const SCRIPTED_IDENTITIES = path.join(CACHE, "scripted");
