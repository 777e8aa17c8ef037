/** Fault injection for the simulator: make the upstream slow, failing, hanging or lying on demand. */

/** One way the simulated upstream can misbehave. */
export type Fault =
  | { kind: 'latency'; ms: number }
  | { kind: 'status'; status: number }
  | { kind: 'hang' }
  | { kind: 'malformed' }
  | { kind: 'wrong-shape' }
  | { kind: 'drop' }
  | { kind: 'rate-limit'; retryAfterSec: number }
  | { kind: 'oversize'; bytes: number };

/** Where a fault applies and how many requests it hits. */
export interface FaultOptions {
  /** Only requests to this workspace (default: all). */
  workspace?: string;
  /** How many requests it hits before it clears itself (default: until clear()). */
  times?: number;
  /** Only list or only single-recording requests (default: both). */
  path?: 'list' | 'recording';
}

/** What tests call to inject faults. */
export interface FaultControl {
  /** Adds a fault; several may be active (first non-latency match wins, latencies add up). */
  set(fault: Fault, options?: FaultOptions): void;
  /** Removes every fault. */
  clear(): void;
}

/** What a request suffers: a delay, then at most one other fault. */
export interface FaultPlan {
  delayMs: number;
  fault: Exclude<Fault, { kind: 'latency' }> | undefined;
}

interface ActiveFault {
  fault: Fault;
  workspace: string | undefined;
  path: 'list' | 'recording' | undefined;
  remaining: number;
}

/** The fault list plus the matching the server uses per request. */
export class FaultStore implements FaultControl {
  private active: ActiveFault[] = [];

  set(fault: Fault, options: FaultOptions = {}): void {
    const times = options.times ?? Number.POSITIVE_INFINITY;
    if (!(times > 0))
      throw new RangeError(`fault times must be positive, got ${String(options.times)}`);
    this.active.push({ fault, workspace: options.workspace, path: options.path, remaining: times });
  }

  clear(): void {
    this.active = [];
  }

  /** Picks the faults for one request and uses up one of each matching fault's `times`. */
  take(workspace: string, path: 'list' | 'recording'): FaultPlan {
    const plan: FaultPlan = { delayMs: 0, fault: undefined };
    if (this.active.length === 0) return plan;
    for (const entry of this.active) {
      if (entry.workspace !== undefined && entry.workspace !== workspace) continue;
      if (entry.path !== undefined && entry.path !== path) continue;
      if (entry.fault.kind === 'latency') {
        plan.delayMs += entry.fault.ms;
        entry.remaining--;
      } else if (plan.fault === undefined) {
        plan.fault = entry.fault;
        entry.remaining--;
      }
    }
    this.active = this.active.filter((entry) => entry.remaining > 0);
    return plan;
  }
}
