/**
 * Cached key verdicts, per workspace, by key hash: L1 (bounded LRU) in front of the shared tier.
 * A verdict is only ever stored under the workspace whose upstream gave it, so a key valid in
 * one workspace can never be taken as valid in another.
 */
import { LRUCache } from 'lru-cache';
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { SharedTier } from '../cache/shared-tier.js';
import type { GatewayMetrics } from '../observability/metrics.js';

interface Verdict {
  readonly valid: boolean;
  readonly until: number;
}

/** The verdict cache. */
export class Verdicts {
  private readonly l1 = new LRUCache<string, Verdict>({ max: 100_000 });

  constructor(
    private readonly shared: SharedTier | null,
    private readonly metrics: GatewayMetrics,
    private readonly ttl: () => { valid: number; invalid: number },
  ) {}

  /** The L1 verdict, if one is current. */
  peek(workspace: WorkspaceId, keyHash: KeyHash, now: number): boolean | undefined {
    const verdict = this.l1.get(`${workspace}\n${keyHash}`);
    if (verdict === undefined) return undefined;
    if (now >= verdict.until) return undefined;
    return verdict.valid;
  }

  /** The shared-tier verdict (copied into L1), or undefined. */
  async lookupShared(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    now: number,
  ): Promise<boolean | undefined> {
    if (this.shared === null) return undefined;
    const valid = await this.shared.getVerdict(workspace, keyHash);
    if (valid === undefined) return undefined;
    this.metrics.authResults.inc({ source: 'l2', result: valid ? 'valid' : 'invalid' });
    const ttl = this.ttl();
    // The L2 TTL is not known here; keep the copy no longer than the shortest configured verdict.
    this.l1.set(`${workspace}\n${keyHash}`, {
      valid,
      until: now + Math.min(ttl.valid, ttl.invalid),
    });
    return valid;
  }

  /**
   * Records a verdict learned from the upstream in both tiers. The key file's verdicts are never
   * recorded (key-check.ts): the file is asked on every request, so its changes apply within a second.
   */
  record(workspace: WorkspaceId, keyHash: KeyHash, valid: boolean, now: number): void {
    const ttl = this.ttl();
    const lifetime = valid ? ttl.valid : ttl.invalid;
    this.l1.set(`${workspace}\n${keyHash}`, { valid, until: now + lifetime });
    if (this.shared !== null) void this.shared.setVerdict(workspace, keyHash, valid, lifetime);
  }

  /** Forgets every L1 verdict (after a reload that changes auth.validTtl or auth.invalidTtl). */
  clear(): void {
    this.l1.clear();
  }
}
