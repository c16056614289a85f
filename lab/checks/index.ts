// The checks that run after every scenario over its evidence (see types.ts).
import type { EvidenceCheck } from "./types.ts";
import { protocolCheck } from "./protocol.ts";
import { atMostOnceCheck } from "./at-most-once.ts";

export const evidenceChecks: EvidenceCheck[] = [protocolCheck, atMostOnceCheck];
