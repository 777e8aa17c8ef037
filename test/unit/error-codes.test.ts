// Every error code has one row in the "Error codes" table of docs/api.md, with its status.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '../../src/errors.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const api = readFileSync(join(root, 'docs/api.md'), 'utf8');
const section = api.slice(
  api.indexOf('## Error codes'),
  api.indexOf('\n## ', api.indexOf('## Error codes') + 1),
);
/** code → status, from the table rows. */
const documented = new Map(
  [...section.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]),
);

/** Codes written as literals outside the registry: `code: 'X'` in JSON bodies and CLIENT_CLOSED in logs. */
function literalCodes(): Set<string> {
  return new Set(literalUses().map((use) => use.code));
}

/** Each literal use, with the status beside it when it is sent as `send(res, <status>, {… code })`. */
function literalUses(): Array<{ code: string; status?: number }> {
  const files = readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true }).filter(
    (e) =>
      e.isFile() &&
      e.name.endsWith('.ts') &&
      !e.parentPath.includes('bench') &&
      !e.parentPath.includes('sim'),
  );
  const uses: Array<{ code: string; status?: number }> = [];
  for (const file of files) {
    const text = readFileSync(join(file.parentPath, file.name), 'utf8');
    for (const m of text.matchAll(/(?:send\(res, (\d{3}), \{[^}]*)?\bcode: '([A-Z][A-Z_]+)'/g))
      uses.push(m[1] === undefined ? { code: m[2]! } : { code: m[2]!, status: Number(m[1]) });
    for (const m of text.matchAll(/'(CLIENT_CLOSED)'/g)) uses.push({ code: m[1]! });
  }
  return uses;
}

void t.test('every code of src/errors.ts is in the docs/api.md table with its status', (t) => {
  t.ok(documented.size >= Object.keys(ERROR_CODES).length, `${documented.size} rows`);
  for (const [code, { status }] of Object.entries(ERROR_CODES))
    t.equal(documented.get(code), status, code);
  t.end();
});

void t.test(
  'every code literal elsewhere in src/ (admin bodies, log-only codes) is in the table',
  (t) => {
    const codes = literalCodes();
    t.ok(
      codes.has('PURGE_UNAVAILABLE') && codes.has('CLIENT_CLOSED'),
      'the scan finds the admin and log-only codes',
    );
    for (const code of codes) t.ok(documented.has(code), code);
    for (const use of literalUses())
      if (use.status !== undefined)
        t.equal(
          documented.get(use.code),
          use.status,
          `${use.code} is sent with the documented status`,
        );
    t.end();
  },
);

void t.test('the table holds no code the source does not use', (t) => {
  const known = new Set([...Object.keys(ERROR_CODES), ...literalCodes()]);
  for (const code of documented.keys()) t.ok(known.has(code), `${code} is used in src/`);
  t.end();
});
