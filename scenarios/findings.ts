// Registered findings: what the pinned OpenClaw was seen to do short of a scenario's
// expectation (see lab/findings/findings.ts for how runs are judged against these).
// Add one only with its exact signature and the run folder that showed it.
import type { FindingRecord } from "../lab/findings/findings.ts";

export const findings: FindingRecord[] = [];
