/**
 * Cached key verdicts, per workspace, by key hash: L1 (bounded LRU) in front of the shared tier.
 * A verdict is only ever stored under the workspace whose upstream gave it, so a key valid in
 * one workspace can never be taken as valid in another. L1 is keyed by the key hash alone, with
 * the key's verdicts for each workspace chained behind it: a request's lookup then hashes no new
 * string (the key hash string is the connection's, already hashed: auth/key-hash.ts).
 */
import { LRUCache } from 'lru-cache';
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { VerdictStore } from './verdict-store.js';

interface Verdict {
  readonly workspace: WorkspaceId;
  readonly valid: boolean;
  readonly until: number;
  /** The same key's verdict for another workspace (a key tried on several), or null. */
  readonly next: Verdict | null;
}

/** L1's bound, in verdicts (a key's chain counts each). */
const MAX_VERDICTS = 100_000;
/** Workspaces a key keeps verdicts for; beyond, the one least recently stored goes. */
const MAX_WORKSPACES_PER_KEY = 8;

function chainLength(verdict: Verdict): number {
  let n = 0;
  for (let v: Verdict | null = verdict; v !== null; v = v.next) n++;
  return n;
}

/** The verdict cache. */
export class Verdicts {
  private readonly l1 = new LRUCache<KeyHash, Verdict>({
    maxSize: MAX_VERDICTS,
    sizeCalculation: chainLength,
  });

  constructor(
    private readonly shared: VerdictStore | null,
    private readonly metrics: GatewayMetrics,
    private readonly ttl: () => { valid: number; invalid: number },
  ) {}

  /** The L1 verdict, if one is current. */
  peek(workspace: WorkspaceId, keyHash: KeyHash, now: number): boolean | undefined {
    for (let v = this.l1.get(keyHash) ?? null; v !== null; v = v.next)
      if (v.workspace === workspace) return now < v.until ? v.valid : undefined;
    return undefined;
  }

  /** The shared store's verdict (copied into L1), or undefined. */
  async lookupShared(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    now: number,
  ): Promise<boolean | undefined> {
    if (this.shared === null) return undefined;
    const valid = await this.shared.get(workspace, keyHash);
    if (valid === undefined) return undefined;
    this.metrics.authResults.inc({ source: 'l2', result: valid ? 'valid' : 'invalid' });
    const ttl = this.ttl();
    // The L2 TTL is not known here; keep the copy no longer than the shortest configured verdict.
    this.store(workspace, keyHash, valid, now + Math.min(ttl.valid, ttl.invalid));
    return valid;
  }

  /**
   * Records a verdict learned from the upstream in both tiers. The key file's verdicts are never
   * recorded (key-check.ts): the file is asked on every request, so its changes apply within a second.
   */
  record(workspace: WorkspaceId, keyHash: KeyHash, valid: boolean, now: number): void {
    const ttl = this.ttl();
    const lifetime = valid ? ttl.valid : ttl.invalid;
    this.store(workspace, keyHash, valid, now + lifetime);
    if (this.shared !== null) void this.shared.set(workspace, keyHash, valid, lifetime);
  }

  /** Puts the workspace's verdict first in the key's chain, replacing its old one. */
  private store(workspace: WorkspaceId, keyHash: KeyHash, valid: boolean, until: number): void {
    const others: Verdict[] = [];
    for (
      let v = this.l1.peek(keyHash) ?? null;
      v !== null && others.length < MAX_WORKSPACES_PER_KEY - 1;
      v = v.next
    )
      if (v.workspace !== workspace) others.push(v);
    let rest: Verdict | null = null;
    for (let i = others.length - 1; i >= 0; i--) rest = { ...others[i]!, next: rest };
    this.l1.set(keyHash, { workspace, valid, until, next: rest });
  }

  /** Forgets every L1 verdict (after a reload that changes auth.validTtl or auth.invalidTtl). */
  clear(): void {
    this.l1.clear();
  }
}
