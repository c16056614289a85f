import { fileURLToPath } from "node:url";
import path from "node:path";

/** Repository root (lab/ sits one level below it). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** The lab's state folder: engine log, package cache, run evidence, operator identity. */
export const STATE = process.env.FLEETLAB_STATE ?? path.join(ROOT, ".lab");
export const RUNS = path.join(STATE, "runs");
export const CACHE = path.join(STATE, "cache");
export const DOCKER_DIR = path.join(ROOT, "docker");
export const FIXTURES = path.join(ROOT, "fixtures");
