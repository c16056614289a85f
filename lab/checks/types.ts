// Checks that read a scenario's evidence after it ran (lab/checks/): each returns expectations
// judged exactly like a scenario's own ctx.check() (lab/findings), against the scenario's
// registered findings plus the lab-wide ones in lab/checks/findings.ts. The runner runs every
// check in lab/checks/index.ts after each scenario settled and its teardown drained (faults
// healed), while its lab is still up; a check that throws makes the verdict unknown (the lab
// could not tell), never hiding a fail. Results land in the scenario's findings.json.
import type { Lab } from "../topology/lab.ts";
import type { FindingRecord } from "../findings/findings.ts";

export interface ScenarioWindow {
  scenario: string;
  /** OpenClaw version under test. */
  version: string;
  /** The scenario's evidence folder (write a small JSON report here). */
  dir: string;
  lab: Lab;
  /** ISO times bounding the scenario (from before its first action to after it settled). */
  startedAt: string;
  endedAt: string;
  /** Tap sequence numbers per node alias taken just before the scenario started (frames after them are this scenario's). */
  tapSince: Record<string, number>;
}

export interface EvidenceCheckInput {
  id: string;
  expectation: string;
  holds: boolean;
  observed?: unknown;
  kind?: FindingRecord["kind"];
}

export interface EvidenceCheck {
  name: string;
  run(w: ScenarioWindow): Promise<EvidenceCheckInput[]>;
}
