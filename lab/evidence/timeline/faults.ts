// faults.jsonl (the run's and each scenario's) on the faults lane of its lab: a band from inject
// to healed with a mark per step, the wait of a trigger before it, and the same box on the
// lane of the member it acts on.
import { TimelineEntry } from "../records/index.ts";
import type { Board } from "./board.ts";
import type { ScenarioView } from "./types.ts";

export function drawFaults(b: Board): void {
  const byId = new Map<string, { entries: TimelineEntry[]; scenario?: ScenarioView; file: string }>();
  const take = (rel: string, scenario?: ScenarioView) => {
    for (const { value: e } of b.readJsonl(rel, TimelineEntry)) {
      const f = byId.get(e.id) ?? { entries: [], file: rel };
      if (!f.entries.some((x) => x.step === e.step && x.t === e.t)) f.entries.push(e);
      f.scenario ??= scenario;
      byId.set(e.id, f);
    }
  };
  take(b.record.faults?.timeline ?? "faults.jsonl");
  for (const s of b.scenarios) if (s.evidence) take(`${s.evidence}/faults.jsonl`, s);
  for (const [id, f] of byId) {
    const steps = f.entries.sort((x, y) => x.t - y.t);
    const at = (step: string) => steps.find((e) => e.step === step);
    const first = steps[0]!;
    const scenario = f.scenario ?? b.scenarioAt(first.t);
    const lab = b.labs.find((l) => l.key === scenario?.lab) ?? b.labs.find((l) => l.t0 !== undefined && first.t >= l.t0 && first.t <= (l.t1 ?? Infinity)) ?? b.labs[0];
    const labKey = lab?.key ?? "";
    const inject = at("inject");
    const healedStep = at("healed") ?? at("heal") ?? at("cleanup") ?? steps.at(-1)!;
    const t = inject?.t ?? first.t;
    const end = Math.max(t, healedStep.t + healedStep.ms);
    const failed = steps.some((e) => e.step === "failed" || e.error);
    const detail = b.redact.value({ id, scenario: scenario?.name, steps });
    const label = `${first.fault} ${first.target}`;
    const marks = steps.filter((e) => e.step !== "prepare" && e.step !== "cleanup").map((e) => ({ t: e.t, label: e.step }));
    const faultLane = b.lane(labKey, "faults", "faults", "faults");
    const trigger = at("trigger");
    if (trigger && inject && inject.t > trigger.t) {
      b.add({ lane: faultLane, kind: "armed", t: trigger.t, end: inject.t, label: `armed: ${label}`, tone: "muted", detail, source: f.file });
    }
    b.add({ lane: faultLane, kind: "fault", t, end, label, tone: failed ? "error" : "fault", key: first.fault, marks, band: true, detail, source: f.file });
    // The member it acts on shows it too (a killed node is down from inject to healed).
    const alias = first.target.split(/\s+/)[0]!;
    if (lab && lab.members.some((m) => m.alias === alias)) {
      b.add({ lane: b.memberLane(lab, alias), kind: "fault", t, end, label: first.fault, tone: failed ? "error" : "fault", key: first.fault, marks, detail, source: f.file });
    }
  }
}
