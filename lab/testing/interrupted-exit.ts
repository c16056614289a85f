// A process interrupted while something else wants to exit: the unit test of lab/engine/cleanup.ts
// sends it SIGINT (twice) and expects the slow clean-up to finish before the process ends with
// 130. Stands in for `fleetlab up` Ctrl-C'd during bring-up, whose containers vanish under it,
// so bring-up fails and the CLI exits (code 3) while the teardown is still running.
import { exitWhenClean, onInterrupt } from "../engine/cleanup.ts";

const ms = Number(process.argv[2] ?? 800);
onInterrupt("slow teardown", async () => {
  await new Promise((r) => setTimeout(r, ms));
  process.stdout.write("cleaned\n");
});
// Registered after the clean-up's own handler: runs right after it, as a failing bring-up would.
process.on("SIGINT", () => setTimeout(() => exitWhenClean(3), 50));
process.stdout.write("ready\n");
setInterval(() => {}, 1 << 30);
