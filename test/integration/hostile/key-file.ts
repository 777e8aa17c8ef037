/** A temporary key file for auth.mode static/both tests, rewritten in place with a moved mtime; removed in teardown. */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashKey } from '../../../src/auth/key-hash.js';

type Tap = { teardown(fn: () => unknown): void };

/** A key file on disk. */
export interface KeyFile {
  readonly path: string;
  readonly dir: string;
  /** Writes raw keys per workspace, hashed as the file requires. */
  writeKeys(keys: Record<string, string[]>): void;
  /** Writes any text (for broken rewrites). */
  writeText(text: string): void;
}

/** Creates a key file holding the SHA-256 of each raw key. */
export function createKeyFile(t: Tap, keys: Record<string, string[]>): KeyFile {
  const dir = mkdtempSync(join(tmpdir(), 'recgw-hostile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'keys.json');
  let version = 0;
  const writeText = (text: string): void => {
    writeFileSync(path, text);
    // Move the mtime on explicitly: two writes within one file-system tick would otherwise look unchanged.
    version += 1;
    const at = new Date(Date.UTC(2030, 0, 1) + version * 1000);
    utimesSync(path, at, at);
  };
  const writeKeys = (table: Record<string, string[]>): void =>
    writeText(
      JSON.stringify(
        Object.fromEntries(
          Object.entries(table).map(([ws, raw]) => [ws, raw.map((key) => hashKey(key))]),
        ),
      ),
    );
  writeKeys(keys);
  return { path, dir, writeKeys, writeText };
}
