/**
 * auth.mode static/both: a key file of SHA-256 hashes per workspace, `{"acme": ["<hex>", …]}`.
 * The file holds no raw keys. It is re-read when its modification time changes (checked at most
 * once a second, on the verification path only); a bad file is logged and counted once per
 * version (recgw_key_file_reloads_total{result="error"}, alerted on) and the old keys stay.
 */
import { readFileSync, statSync } from 'node:fs';
import type { Logger } from 'pino';
import { asWorkspaceId, type KeyHash, type WorkspaceId } from '../brands.js';

const HEX_SHA256 = /^[0-9a-f]{64}$/;
const CHECK_EVERY_MS = 1000;
/** The "version" of a file that is not there: a missing file fails once, not once a second. */
const MISSING = -1;

/** A re-read's outcome, for the reload counter. */
export type KeyFileReload = 'ok' | 'error';

/** Parses the key file's text; throws with a message naming the bad entry. */
export function parseKeyFile(text: string): Map<string, Set<string>> {
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('key file must be a JSON object');
  const table = new Map<string, Set<string>>();
  for (const [workspace, hashes] of Object.entries(parsed)) {
    // Workspaces come from the Host in lower case: a name that is not one would never match.
    if (asWorkspaceId(workspace) === undefined)
      throw new Error(`key file: ${workspace} is not a workspace name (one lower-case DNS label)`);
    if (!Array.isArray(hashes))
      throw new Error(`key file: ${workspace} must be an array of hex SHA-256 hashes`);
    const set = new Set<string>();
    for (const hash of hashes) {
      if (typeof hash !== 'string' || !HEX_SHA256.test(hash.toLowerCase()))
        throw new Error(`key file: ${workspace} has an entry that is not a hex SHA-256`);
      set.add(hash.toLowerCase());
    }
    table.set(workspace, set);
  }
  return table;
}

/** The static key table. */
export class StaticKeys {
  private table = new Map<string, Set<string>>();
  private mtimeMs = -1;
  /** The file version whose re-read last failed: it is not tried (or reported) again. */
  private failedMtimeMs: number | undefined;
  private checkedAt = -Infinity;

  /** Loads the file now; throws when it cannot be read or parsed (start-up must fail loudly). */
  constructor(
    private readonly path: string,
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly onReload: (result: KeyFileReload) => void = () => {},
  ) {
    this.load();
  }

  /**
   * True when the key hash is listed for the workspace. Lookup is by hash, so timing reveals
   * nothing about the key; the hash is only ever compared against hashes.
   */
  has(workspace: WorkspaceId, keyHash: KeyHash): boolean {
    this.reloadIfChanged();
    return this.table.get(workspace)?.has(keyHash) ?? false;
  }

  private reloadIfChanged(): void {
    const now = this.now();
    if (now - this.checkedAt < CHECK_EVERY_MS) return;
    this.checkedAt = now;
    const version = this.version();
    if (version === this.mtimeMs || version === this.failedMtimeMs) return;
    try {
      this.load();
      this.failedMtimeMs = undefined;
      this.logger.info({ file: this.path }, 'key file reloaded');
      this.onReload('ok');
    } catch (error) {
      this.failedMtimeMs = version;
      this.logger.error(
        { file: this.path, err: error },
        'key file reload failed; keeping the previous keys',
      );
      this.onReload('error');
    }
  }

  /** The file's modification time, or MISSING when it cannot be stat'ed. */
  private version(): number {
    try {
      return statSync(this.path).mtimeMs;
    } catch {
      return MISSING;
    }
  }

  private load(): void {
    const mtimeMs = statSync(this.path).mtimeMs;
    this.table = parseKeyFile(readFileSync(this.path, 'utf8'));
    this.mtimeMs = mtimeMs;
  }
}
