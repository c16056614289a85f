// restart: stop (timeoutSeconds), then start; in effect once the container runs again with a
// new start time. Nothing is left to heal; heal only waits until it runs.
import { ContainerFault, refreshIp } from "./container.ts";
import type { Detail, FaultLab, FaultOptions } from "./fault.ts";
import { anywhere, defineFault } from "./kind.ts";

export class RestartFault extends ContainerFault {
  readonly kind = "restart";
  #before = "";
  readonly timeoutSeconds: number;
  constructor(lab: FaultLab, alias: string, timeoutSeconds = 10, opts: FaultOptions = {}) {
    super(lab, alias, opts);
    this.timeoutSeconds = timeoutSeconds;
  }
  protected async doInject(): Promise<Detail> {
    this.#before = (await this.st()).StartedAt;
    await this.container.restart({ t: this.timeoutSeconds });
    return { timeoutSeconds: this.timeoutSeconds };
  }
  protected async inEffect(): Promise<Detail | undefined> {
    const st = await this.st();
    if (!st.Running || st.StartedAt === this.#before) return undefined;
    return { pid: st.Pid, ...(await refreshIp(this.lab, this.alias)) };
  }
}

export const restart = defineFault({
  name: "restart",
  family: "process",
  describe: "stop then start the member's container (a new process, a new network namespace); nothing is left to heal",
  available: anywhere,
  make: (lab: FaultLab, alias: string, opts: FaultOptions & { timeoutSeconds?: number } = {}) => new RestartFault(lab, alias, opts.timeoutSeconds ?? 10, opts),
  bench: [{ label: "restart (heal: nothing left)", observedBy: "engine: running with a new start time", make: (bed) => new RestartFault(bed.lab, "b", 10) }],
});
