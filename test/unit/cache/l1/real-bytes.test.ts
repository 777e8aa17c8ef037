// cache.l1.maxBytes is a promise about memory, not only about a count: with recordings stored as
// the gateway stores them, through three times what the bound holds, the heap and ArrayBuffer
// growth stays within what L1 counts, and the count within the bound. Each fill runs in a fresh
// process (fixtures/fill-l1.ts says why). The curve's own count is held to real memory alone as
// well, under each policy: beside the L1's margin, an under-count of the curve would not show.
import t from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const MAX_BYTES = 8 * 1024 * 1024;
/** Three times and more what 8 MiB holds at roughly 1.3 to 2.4 KB a recording. */
const RECORDINGS = 15_000;

interface Filled {
  items: number;
  counted: number;
  /** The hit-ratio curve's memory, beside the bound (hit-ratio-curve.ts). */
  curve: number;
  real: number;
}

/**
 * Runs a fixture in a fresh process with --expose-gc and parses the line it prints. Without
 * coverage: V8's precise coverage keeps counters for every function the fill compiles, megabytes
 * of heap that are the test runner's, not the L1's (under `npm test` on Node 24 they pushed real
 * growth past the count where the same fill without them sat well within it).
 */
async function measure<T>(name: string, args: readonly string[]): Promise<T> {
  // tap's process tracking re-enters every child; this is how it is told to leave coverage off.
  const env = { ...process.env, _TAPJS_PROCESSINFO_COVERAGE_: '0' };
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', '@tapjs/typescript/import', fixture(name), ...args],
    { stdio: ['ignore', 'pipe', 'inherit'], env },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`${name} exited with ${code}`);
  return JSON.parse(out) as T;
}

// Five fresh processes, each filling an L1 three times over: on a loaded 2-core host the file
// runs past tap's default two minutes.
t.setTimeout(600_000);

const fill = (policy: 'lru' | 's3-fifo', links: 'with' | 'without') =>
  measure<Filled>('fill-l1.ts', [policy, links, String(MAX_BYTES), String(RECORDINGS)]);

// Both names (UUID and link code) with LRU; S3-FIFO, whose ghost is counted too, with UUIDs only.
for (const [policy, links] of [
  ['lru', 'with'],
  ['s3-fifo', 'without'],
] as const)
  void t.test(`${policy}, ${links} link codes: real memory within the count`, async (t) => {
    const { items, counted, curve, real } = await fill(policy, links);
    const what = `${items} items, counted ${counted}, curve ${curve}, real ${real}`;
    t.ok(counted <= MAX_BYTES, `counted within the bound (${what})`);
    t.ok(real <= counted + curve, `real growth within the count and the curve (${what})`);
    // Filled: the count reached the bound (an item count would move with what an entry costs).
    t.ok(items > 1000 && counted > MAX_BYTES * 0.99, `and the bound was filled (${what})`);
  });

// Half the keys simulated (1 MiB), a sixteenth (8 MiB), a 128th (64 MiB): at each rate the
// miniatures fill to their bounds, so the curve holds about the same memory.
for (const policy of ['s3-fifo', 'lru'] as const)
  for (const mib of [1, 8, 64])
    void t.test(
      `the ${policy} curve of a ${mib} MiB L1, alone: real memory within its count`,
      async (t) => {
        const { counted, real } = await measure<{ counted: number; real: number }>(
          'fill-curve.ts',
          [String(mib * 1024 * 1024), policy],
        );
        t.ok(real <= counted, `real ${real} within counted ${counted}`);
        t.ok(counted > 1_000_000, `and the miniatures were filled (counted ${counted})`);
      },
    );
