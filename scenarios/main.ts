// The `fleetlab` command: the framework's CLI (lab/commands/cli.ts), handed this folder's scenarios.
// Help and a mistyped command or option are answered from the usage alone (lab/commands/usage.ts),
// before the lab and its scenarios are loaded: compiling those takes seconds.
// A scenario name is checked against the scenario files' names the same way (no file is loaded),
// and `list` (its names or patterns, its --json) is answered from what it says of each scenario, kept
// under a hash of the sources (loaded when they change).
// Node runs all of it as it is (type stripping); before the lab loads, its compile cache is turned
// on (kept in the temp folder, keyed by each file's content), so a start compiles only what changed.
// Then every check of the input that needs no more than the settings and the scenarios' names
// (lab/commands/inputs.ts): bad settings are refused before the lab loads, with nothing created.
import fs from "node:fs";
import module from "node:module";
import path from "node:path";
import { answerAtOnce, listText, parseCli, refuseUnknownScenarios, type ListEntry } from "../lab/commands/usage.ts";
import { jsonText, listDocument } from "../lab/commands/json.ts";
import { selectNames } from "../lab/core/settings.ts";
import { checkInput } from "../lab/commands/inputs.ts";
import { LabError } from "../lab/core/log.ts";
import { STATE } from "../lab/core/paths.ts";
import { scenarioFiles, sourcesHash } from "./index.ts";

const argv = process.argv.slice(2);
const names = scenarioFiles().map((f) => path.basename(f, ".ts"));
const answered = answerAtOnce(argv) ?? refuseUnknownScenarios(argv, names) ?? refuseBadInput(argv);
if (answered !== undefined) process.exitCode = answered;
else if (argv[0] === "list") {
  // `list [pattern...] [--json]`: answered from the entries kept under the sources' hash (loaded when they change).
  const { values, positionals } = parseCli(argv);
  const file = path.join(STATE, "list.json");
  const key = sourcesHash();
  let kept: { key?: string; scenarios?: ListEntry[] } = {};
  try {
    kept = JSON.parse(fs.readFileSync(file, "utf8")) as typeof kept;
  } catch {
    /* none yet, or unreadable: listed afresh */
  }
  let entries = kept.key === key ? kept.scenarios : undefined;
  if (entries === undefined) {
    module.enableCompileCache();
    const { loadScenarios } = await import("./index.ts");
    entries = (await loadScenarios()).map((s) => ({ name: s.name, topology: s.topology, proves: s.proves }));
    fs.mkdirSync(STATE, { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ key, scenarios: entries }));
  }
  const words = positionals.slice(1);
  const picked = words.length ? selectNames(words, entries.map((e) => e.name)).names : undefined;
  const chosen = picked ? entries.filter((e) => picked.includes(e.name)) : entries;
  process.stdout.write(values.json ? jsonText(listDocument(chosen)) : listText(chosen));
} else {
  module.enableCompileCache();
  const { runCli } = await import("../lab/commands/cli.ts");
  const { loadScenarios } = await import("./index.ts");
  runCli(argv, () => loadScenarios());
}

/** Bad input the settings and the scenarios' names already show: one line, its exit code (2). */
function refuseBadInput(args: string[]): number | undefined {
  try {
    const { values, positionals } = parseCli(args);
    checkInput(values, positionals, names);
    return undefined;
  } catch (err) {
    // Anything but bad input (a LabError) is left to the command, which meets it again and says it as it does.
    if (!(err instanceof LabError)) return undefined;
    process.stderr.write(`fleetlab: ${err.message}\n`);
    return err.exitCode;
  }
}
