/**
 * "What does a per-key quota cost on the hit path?" L1 hits of one recording with quotas off
 * (the default, twice: the second is the control), with a quota counted in Redis and with one
 * counted per instance, in the same rounds. The quota is far above what the run reaches, so every
 * answer is a 200 hit and the difference is the cost of counting alone.
 */
import { alternate } from './compare.js';
import { comparison, type CaseResult } from './report.js';
import { clientHeaders, gateway, hitPaths, type Bench } from './setup.js';

const UNREACHABLE_QUOTA = 'limits: { perKey: { requests: 1000000000, window: 1s } }';

export async function quotaCase(b: Bench): Promise<CaseResult> {
  const { url, keyPrefix } = await b.redis();
  const measured = await alternate(
    b.settings,
    [
      { label: 'quotas off', server: await gateway(b) },
      {
        label: 'quota in Redis',
        server: await gateway(
          b,
          `${UNREACHABLE_QUOTA}\ncache: { redis: { url: '${url}', keyPrefix: '${keyPrefix}' } }`,
        ),
      },
      { label: 'quota per instance', server: await gateway(b, UNREACHABLE_QUOTA) },
      { label: 'control', server: await gateway(b) },
    ],
    { paths: [hitPaths(b.sim).recording], headers: clientHeaders(b.sim) },
  );
  return comparison(
    'quota',
    'L1 hits with a quota counted in Redis, per instance, or none',
    measured,
    'quotas off',
    'control',
  );
}
