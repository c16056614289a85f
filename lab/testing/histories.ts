// Hand-made histories for the unit tests of a scenario's declared checks and premises
// (scenarios/<name>.test.ts): no Docker, no gateway. What the runner records, built in one place.
import { deriveChecks, derivePremises, emptyHistory, type ScenarioHistory } from "../judge/history.ts";
import type { NodeView } from "../kits/nodes.ts";
import type { Scenario } from "../scenario.ts";

/** The version hand-made histories run on unless a test says otherwise (the pinned one's records name it). */
export const HISTORY_VERSION = "2026.9.6";

/** A history whose body returned having observed `observations`, judged against no record until the scenario's own; recorded, as the runner records it, with the checks and premises `s` declares. */
export function historyOf(s: Pick<Scenario, "name"> & Partial<Pick<Scenario, "checks" | "premises">>, observations: object, version = HISTORY_VERSION): ScenarioHistory {
  return { ...emptyHistory(s.name, version, { own: [], labWide: [] }), bodyReturned: true, observations: observations as ScenarioHistory["observations"], declared: { checks: (s.checks ?? []).map((c) => c.id), premises: (s.premises ?? []).map((p) => p.id) } };
}

/** One declared check of `s` over `observations` (undefined: it had nothing to judge). */
export function checkOf(s: Pick<Scenario, "checks">, id: string, observations: object) {
  return deriveChecks(s.checks!, observations, true).checks.find((c) => c.id === id);
}

/** One declared premise of `s` over `observations` (undefined: it had nothing to judge). */
export function premiseOf(s: Pick<Scenario, "premises">, id: string, observations: object) {
  return derivePremises(s.premises, observations).premises.find((p) => p.id === id);
}

/** A node as node.list and the node itself show it when all is well: paired, approved, connected, nothing pending. */
export function approvedNodeView(more: Partial<NodeView> = {}): NodeView {
  return { node: {}, nodeId: "n1", approvalState: "approved", paired: true, connected: true, pendingDevice: 0, pendingNode: 0, deviceApproved: true, nodeApproved: true, bundles: [], ...more };
}
