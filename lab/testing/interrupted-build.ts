// A set-up step interrupted (lab/engine/child.test.ts sends it SIGTERM): a child process group that
// would outlive the run (a shell and its own child, as npm and mmdebstrap have), and a staging
// folder that must not stay. Prints "ready <pgid>" once both exist.
import fs from "node:fs";
import { runChild } from "../engine/child.ts";
import { exitWhenClean, onInterrupt } from "../engine/cleanup.ts";

const staging = process.argv[2]!;
fs.mkdirSync(staging, { recursive: true });
const unstage = onInterrupt("removing the staging folder", async () => fs.rmSync(staging, { recursive: true, force: true }));
const build = runChild("bash", ["-c", "sleep 120 & echo started; wait"], { timeout: 300_000, what: "a long build" });
build.catch(() => {}).finally(() => unstage());
setTimeout(() => {
  // The group's id is the shell's pid: find it by the staging folder's owner (this process) via /proc.
  const kids = fs.readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
  process.stdout.write(`ready ${kids.join(",")}\n`);
}, 500);
build.then(() => exitWhenClean(0), () => exitWhenClean(3));
