// Every scenario the lab knows: each file in this folder, in parity/ (what OpenClaw's own qa-lab
// asserts in-process, asserted across containers) and in repro/ that default-exports
// defineScenario(...). Adding a scenario is adding its file (its findings sit beside it);
// nothing here needs editing. The CLI and the vitest suite hand this list to the runner.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Scenario } from "../lab/scenario.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** Files in scenarios/ that are not scenarios. */
const NOT_SCENARIOS = /(^index\.ts$|^main\.ts$|^findings-docs\.ts$|\.test\.ts$|\.scenario\.ts$|\.d\.ts$)/;

/**
 * The scenario files, sorted by path (the run order is decided by the runner); without repro/
 * and fleet/ when `repro` is false (parity/ is always in): the field-bug repros and the fleet
 * scenarios (hundreds of scripted nodes each) run in `make lab`, not in `make test`.
 */
export function scenarioFiles(dir = HERE, opts: { repro?: boolean } = {}): string[] {
  const out: string[] = [];
  for (const sub of opts.repro === false ? ["", "parity"] : ["", "parity", "repro", "fleet"]) {
    const d = path.join(dir, sub);
    if (!fs.existsSync(d)) continue;
    for (const f of fs.readdirSync(d).sort()) if (f.endsWith(".ts") && !NOT_SCENARIOS.test(f)) out.push(path.join(d, f));
  }
  return out;
}

/**
 * Every scenario; `repro: false` leaves out scenarios/repro/ (the field-bug repros) and
 * scenarios/fleet/ (the fleet scenarios): `make test` runs without them, see lab.scenario.ts;
 * `make lab`, `make repro` and `make matrix` have them.
 */
export async function loadScenarios(dir = HERE, opts: { repro?: boolean } = {}): Promise<Scenario[]> {
  const list: Scenario[] = [];
  const files = scenarioFiles(dir, opts);
  for (const file of files) {
    const mod = (await import(pathToFileURL(file).href)) as { default?: Scenario };
    const s = mod.default;
    if (!s || typeof s.run !== "function" || typeof s.name !== "string") {
      throw new Error(`${path.relative(process.cwd(), file)} does not default-export defineScenario({...}); move helpers to lab/kits/`);
    }
    list.push(s);
  }
  const seen = new Map<string, string>();
  for (const [i, s] of list.entries()) {
    const other = seen.get(s.name);
    if (other) throw new Error(`two scenarios are named ${s.name}: ${other} and ${files[i]}`);
    seen.set(s.name, files[i]!);
  }
  return list;
}

/**
 * A hash of every source a scenario's listing can come from: each .ts file under scenarios/
 * and lab/ (tests aside), by path and content. `fleetlab list` keeps its text under this key in
 * the state folder and prints it again without loading a scenario while the key holds.
 */
export function sourcesHash(root = path.dirname(HERE)): string {
  const h = createHash("sha256");
  for (const top of ["scenarios", "lab"]) {
    const dir = path.join(root, top);
    for (const f of (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts")).sort()) {
      h.update(`${top}/${f}\0`).update(fs.readFileSync(path.join(dir, f))).update("\0");
    }
  }
  return h.digest("hex");
}
