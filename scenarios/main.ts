// The `fleetlab` command: the framework's CLI (lab/commands/cli.ts), handed this folder's scenarios.
// Help and a mistyped command or option are answered from the usage alone (lab/commands/usage.ts),
// before the lab and its scenarios are loaded: compiling those takes seconds.
// A scenario name is checked against the scenario files' names the same way (no file is loaded),
// and `list` is answered from its text kept under a hash of the sources (loaded when they change).
// Node runs all of it as it is (type stripping); before the lab loads, its compile cache is turned
// on (kept in the temp folder, keyed by each file's content), so a start compiles only what changed.
// Then every check of the input that needs no more than the settings and the scenarios' names
// (lab/commands/inputs.ts): bad settings are refused before the lab loads, with nothing created.
import fs from "node:fs";
import module from "node:module";
import path from "node:path";
import { answerAtOnce, listText, parseCli, refuseUnknownScenarios } from "../lab/commands/usage.ts";
import { checkInput } from "../lab/commands/inputs.ts";
import { LabError } from "../lab/core/log.ts";
import { STATE } from "../lab/core/paths.ts";
import { scenarioFiles, sourcesHash } from "./index.ts";

const argv = process.argv.slice(2);
const names = scenarioFiles().map((f) => path.basename(f, ".ts"));
const answered = answerAtOnce(argv) ?? refuseUnknownScenarios(argv, names) ?? refuseBadInput(argv);
if (answered !== undefined) process.exitCode = answered;
else if (argv.length === 1 && argv[0] === "list") {
  const file = path.join(STATE, "list.json");
  const key = sourcesHash();
  let kept: { key?: string; text?: string } = {};
  try {
    kept = JSON.parse(fs.readFileSync(file, "utf8")) as typeof kept;
  } catch {
    /* none yet, or unreadable: listed afresh */
  }
  let text = kept.key === key ? kept.text : undefined;
  if (text === undefined) {
    module.enableCompileCache();
    const { loadScenarios } = await import("./index.ts");
    text = listText(await loadScenarios());
    fs.mkdirSync(STATE, { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ key, text }));
  }
  process.stdout.write(text);
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
