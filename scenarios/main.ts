// The `fleetlab` command: the framework's CLI (lab/commands/cli.ts), handed this folder's scenarios.
// Help and a mistyped command or option are answered from the usage alone (lab/commands/usage.ts),
// before the lab and its scenarios are loaded: compiling those takes seconds.
import { answerAtOnce } from "../lab/commands/usage.ts";

const argv = process.argv.slice(2);
const answered = answerAtOnce(argv);
if (answered !== undefined) process.exitCode = answered;
else {
  const { runCli } = await import("../lab/commands/cli.ts");
  const { loadScenarios } = await import("./index.ts");
  runCli(argv, () => loadScenarios());
}
