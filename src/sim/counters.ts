/** Request counters of the simulator, so tests can prove what did (or did not) reach the upstream. */

/** One request the simulator routed to a workspace resource. */
export interface SimRequest {
  workspace: string;
  resource: 'list' | 'recording';
  /** The id or link code as requested (recording only). */
  id?: string;
  /** Whether X-Api-Key was valid for this workspace. */
  keyValid: boolean;
  /** The simulator clock's now() when the request arrived. */
  at: number;
}

/** Read side of the counters, as tests see them. */
export interface SimCounters {
  /** Every request received, routed or not. */
  readonly total: number;
  /** Requests routed to `workspace`. */
  byWorkspace(workspace: string): number;
  /** Requests whose path (without the query string) was exactly `path`. */
  byPath(path: string): number;
  /** Body bytes of the 200s of recordings and list pages. */
  readonly bodyBytes: number;
  /** 304 answers to conditional requests. */
  readonly notModified: number;
  /** The most recent routed requests, oldest first (bounded ring). */
  readonly requests: SimRequest[];
  /** Zeroes everything. */
  reset(): void;
}

/** The default size of the request ring. */
export const DEFAULT_RING_SIZE = 10_000;

/** Counters plus the write methods the server uses. */
export class SimCounterStore implements SimCounters {
  total = 0;
  bodyBytes = 0;
  notModified = 0;
  private readonly workspaces = new Map<string, number>();
  private readonly paths = new Map<string, number>();
  private ring: SimRequest[] = [];
  private next = 0;

  constructor(private readonly ringSize = DEFAULT_RING_SIZE) {}

  /** Counts a request by its path; called for every request. */
  countPath(path: string): void {
    this.total++;
    this.paths.set(path, (this.paths.get(path) ?? 0) + 1);
  }

  /** Records a request that was routed to a workspace resource. */
  record(request: SimRequest): void {
    this.workspaces.set(request.workspace, (this.workspaces.get(request.workspace) ?? 0) + 1);
    // A ring, so a long benchmark keeps memory flat.
    if (this.ring.length < this.ringSize) this.ring.push(request);
    else this.ring[this.next] = request;
    this.next = (this.next + 1) % this.ringSize;
  }

  /** Counts a 200 (with its body size) or a 304 of a recording or list page. */
  countAnswer(status: 200 | 304, bodyBytes: number): void {
    if (status === 304) this.notModified++;
    this.bodyBytes += bodyBytes;
  }

  byWorkspace(workspace: string): number {
    return this.workspaces.get(workspace) ?? 0;
  }

  byPath(path: string): number {
    return this.paths.get(path) ?? 0;
  }

  get requests(): SimRequest[] {
    if (this.ring.length < this.ringSize) return [...this.ring];
    return [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  reset(): void {
    this.total = 0;
    this.bodyBytes = 0;
    this.notModified = 0;
    this.workspaces.clear();
    this.paths.clear();
    this.ring = [];
    this.next = 0;
  }
}
