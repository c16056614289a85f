// stop: graceful stop (SIGTERM, then SIGKILL after timeoutSeconds); heal starts it again.
import { ContainerFault } from "./container.ts";
import type { Detail, FaultLab, FaultOptions } from "./fault.ts";
import { anywhere, defineFault } from "./kind.ts";

export class StopFault extends ContainerFault {
  readonly kind = "stop";
  readonly timeoutSeconds: number;
  constructor(lab: FaultLab, alias: string, timeoutSeconds = 10, opts: FaultOptions = {}) {
    super(lab, alias, opts);
    this.timeoutSeconds = timeoutSeconds;
  }
  protected async doInject(): Promise<Detail> {
    // The engine answers once the container has stopped (or was already stopped: 304).
    await this.container.stop({ t: this.timeoutSeconds }).catch((err: { statusCode?: number }) => {
      if (err.statusCode !== 304) throw err;
    });
    return { timeoutSeconds: this.timeoutSeconds };
  }
  protected async inEffect(): Promise<Detail | undefined> {
    const st = await this.st();
    // Exit code 137 after a stop means the grace period ran out and the engine killed it.
    return st.Running ? undefined : { exitCode: st.ExitCode, graceful: st.ExitCode !== 137 };
  }
}

export const stop = defineFault({
  name: "stop",
  family: "process",
  describe: "SIGTERM, SIGKILL after timeoutSeconds (default 10); heal starts the same container again",
  available: anywhere,
  make: (lab: FaultLab, alias: string, opts: FaultOptions & { timeoutSeconds?: number } = {}) => new StopFault(lab, alias, opts.timeoutSeconds ?? 10, opts),
  bench: [{ label: "stop (SIGTERM, graceful; heal: start)", observedBy: "engine: not running / running", make: (bed) => new StopFault(bed.lab, "b", 10) }],
});
