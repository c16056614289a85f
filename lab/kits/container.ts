// A member's container as the engine sees it: running or not, its exit code, when it started
// and finished, how often it restarted. What a repro reads beside its node's or gateway's own
// view (node.list, the log) to tell "the process exited" from "it is running but silent".
//
//   const st = await containerState(lab, "node-1");   // or lab.gateway's alias, "gateway"
//   st.running ? "running" : `exited ${st.exitCode}`
import { LabInfraError } from "../definitions/verdict.ts";
import { docker } from "../engine/docker.ts";
import type { Lab } from "../topology/lab.ts";

export interface ContainerState {
  /** The engine's State.Running. */
  running: boolean;
  /** The engine's State.Status: "running", "exited", "paused", "restarting", "created", "dead". */
  status: string;
  paused: boolean;
  /** The main process's exit code once it exited; null while it runs. */
  exitCode: number | null;
  /** When the container last started / finished (epoch ms); undefined if never. */
  startedAt: number | undefined;
  finishedAt: number | undefined;
  oomKilled: boolean;
  restartCount: number;
}

/** The fields of `docker inspect` this reads. */
export interface InspectState {
  State: { Running: boolean; Status: string; Paused?: boolean; ExitCode: number; StartedAt?: string; FinishedAt?: string; OOMKilled?: boolean };
  RestartCount?: number;
}

/** Docker writes "0001-01-01T00:00:00Z" for a time that has not happened. */
function when(iso: string | undefined): number | undefined {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) && t > 0 ? t : undefined;
}

/** A container's state from its inspect answer. */
export function stateOf(info: InspectState): ContainerState {
  const s = info.State;
  return {
    running: s.Running,
    status: s.Status,
    paused: s.Paused === true,
    exitCode: s.Running ? null : s.ExitCode,
    startedAt: when(s.StartedAt),
    finishedAt: s.Running ? undefined : when(s.FinishedAt),
    oomKilled: s.OOMKilled === true,
    restartCount: info.RestartCount ?? 0,
  };
}

/**
 * The state of the member `alias`'s container (a node host, "gateway", a tap, ...). An engine
 * that does not answer is the lab's failure (LabInfraError: the verdict unknown), never
 * OpenClaw's.
 */
export async function containerState(lab: Lab, alias: string): Promise<ContainerState> {
  const id = lab.member(alias).id;
  try {
    return stateOf((await docker().getContainer(id).inspect()) as InspectState);
  } catch (err) {
    throw new LabInfraError(`could not inspect ${alias}'s container: ${(err as Error).message}`, { cause: err });
  }
}
