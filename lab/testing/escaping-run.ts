// The `fleetlab` CLI handed scenarios that make the mistake that once ended a full `make lab`
// (lab/core/escapes.docker.test.ts runs it): one leaves a rejected promise behind, one throws from a
// timer, one after them checks that the lab is still healthy. With ESCAPE_LAB_BUG=1, an error
// escapes outside every scenario while the second one runs (a bug of the lab's own): the run
// must remove its labs, print the table so far and exit 3. ESCAPE_DISK_FULL=1: see below.
import { runCli } from "../commands/cli.ts";
import { defineScenario } from "../scenario.ts";
import { sleep } from "../core/wait.ts";

let labBugNow = false;
if (process.env.ESCAPE_LAB_BUG === "1") {
  // Started here, outside every scenario: what it throws belongs to no scenario.
  const t = setInterval(() => {
    if (!labBugNow) return;
    clearInterval(t);
    throw new Error("a bug of the lab's own (escaping-run.ts)");
  }, 50);
}

const scenarios = [
  defineScenario({
    name: "escape-floating",
    proves: "a promise the scenario leaves behind rejects while it runs: its verdict, not the run's end",
    topology: "shared",
    order: 1,
    timeoutMs: 60_000,
    async run({ lab, signal }) {
      // The pattern of repro-155359: a gateway call started now, awaited (never) later.
      void lab.operator.client.request("agent.wait", { runId: "no-such-run", timeoutMs: 1 }, { timeoutMs: 1 });
      await sleep(30_000, signal);
    },
  }),
  defineScenario({
    name: "escape-timer",
    proves: "a throw from a timer the scenario set: its verdict, not the run's end",
    topology: "shared",
    order: 2,
    timeoutMs: 60_000,
    async run({ signal }) {
      labBugNow = true;
      setTimeout(() => {
        throw new Error("thrown from a timer of escape-timer");
      }, 20);
      await sleep(30_000, signal);
    },
  }),
  defineScenario({
    name: "escape-after",
    proves: "the run went on: the shared lab still answers",
    topology: "shared",
    order: 3,
    timeoutMs: 60_000,
    async run({ lab, check }) {
      const sick = await lab.health();
      check({ id: "E-escape-after-healthy", expectation: "the shared lab is healthy after two scenarios' errors escaped", holds: sick.length === 0, observed: sick });
    },
  }),
];

// ESCAPE_DISK_FULL=1: one scenario that keeps writing its log while the test fills the disk
// under the run folder (lab/core/escapes.docker.test.ts): the run must end as the lab's own error.
const keepsLogging = defineScenario({
  name: "keeps-logging",
  proves: "a run folder that fills up ends the run as unknown (exit 3), labs removed, run.json valid",
  topology: "shared",
  timeoutMs: 120_000,
  async run({ log, signal }) {
    for (let i = 0; i < 1_000; i++) {
      log(`line ${i} ${"x".repeat(2_000)}`);
      await sleep(100, signal);
    }
  },
});

runCli(process.argv.slice(2), async () => (process.env.ESCAPE_DISK_FULL === "1" ? [keepsLogging] : scenarios));
