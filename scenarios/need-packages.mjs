// Loaded first by the fleetlab command (scenarios/fleetlab.mjs, and `node --import` in package.json's
// scripts), before anything that needs the repository's npm packages: when they are not installed
// (a fresh clone before `npm ci`, or a package.json that names a package added since), one line
// that says what is missing and the command that installs it, and exit 2 (bad input or set-up),
// instead of ERR_MODULE_NOT_FOUND's stack. Node's own modules only; runs on any Node npm runs on.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
const names = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies });
// npm puts every package that package.json names at the top of node_modules.
const missing = names.filter((name) => !fs.existsSync(path.join(root, "node_modules", name, "package.json")));
if (missing.length) {
  const what = !fs.existsSync(path.join(root, "node_modules")) || missing.length === names.length
    ? "the repository's npm packages are not installed (no node_modules)"
    : `npm packages missing from node_modules: ${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ` and ${missing.length - 3} more` : ""}`;
  process.stderr.write(`fleetlab: ${what}: run \`npm ci\` (or \`make deps\`) in ${root.replace(/\/$/, "")}, then this again\n`);
  process.exit(2);
}
