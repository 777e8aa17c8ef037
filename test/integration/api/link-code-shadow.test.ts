// UUIDs and link codes live in separate key spaces (L1 and Redis): a recording whose public link
// code has the text of another recording's UUID never answers for that UUID.
import t from 'tap';
import type { Recording } from '../../../src/recording.js';
import { startGateway } from '../../helpers/gateway.js';
import { startOrigin } from '../../helpers/origin-server.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';
import { getRedis, waitFor } from '../../helpers/redis.js';

const PREFIX = '/api/external/v2/recordings';
const UUID_Y = '2d9e7a74-8b2a-4c9c-9c5e-3f4051627384';
const UUID_X = '3eaf8b85-9c3b-4dad-8d6f-405162738495';
// X's link code is Y's UUID, spelled as the spec allows a code to be.
const X = recordingFixture({ id: UUID_X, title: 'X', public_link_id: UUID_Y });
const Y = recordingFixture({ id: UUID_Y, title: 'Y', public_link_id: 'code-of-y' });

void t.test(
  "a link code shaped like another recording's UUID never answers for that UUID",
  async (t) => {
    const redis = await getRedis(t);
    const origin = await startOrigin(t, (req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      const send = (status: number, body: unknown): void =>
        void res
          .writeHead(status, { 'content-type': 'application/json' })
          .end(JSON.stringify(body));
      if (path.endsWith('/recordings')) {
        send(200, {
          recordings: [Y, X],
          pagination: { total_records: 2, total_pages: 1, current_page_number: 1, page_size: 30 },
        });
        return;
      }
      // The upstream matches ids first, then codes: Y's UUID is Y.
      const ref = path.split('/').pop() ?? '';
      const found: Recording | undefined =
        [X, Y].find((r) => r.id === ref.toLowerCase()) ??
        [X, Y].find((r) => r.public_link_id === ref);
      if (found === undefined) send(404, { error: 'Recording not found' });
      else send(200, found);
    });
    const config = {
      upstream: { baseUrl: `${origin.url}/ws/{workspace}/api/external/v2` },
      cache: { redis: { keyPrefix: redis.keyPrefix } },
      auth: { validTtl: '10m' },
    };
    const first = await startGateway(t, { config, redisUrl: redis.url });
    const second = await startGateway(t, { config, redisUrl: redis.url });
    await waitFor(
      () => first.app.redis?.up === true && second.app.redis?.up === true,
      10_000,
      'Redis tier up',
    );
    const key = 'key-of-acme';
    const idOf = async (gw: typeof first, ref: string): Promise<unknown> => {
      const res = await gw.get(`${PREFIX}/${ref}`, { key });
      t.equal(res.status, 200, `${ref}: 200`);
      return res.status === 200 ? res.json().id : res.status;
    };

    // Y first, then X: storing X (and X's link code) comes after Y's entry.
    t.equal(await idOf(first, 'code-of-y'), UUID_Y, 'Y by its link code');
    t.equal(await idOf(first, UUID_X), UUID_X, 'X by its UUID (stores X under its link code too)');
    t.equal(
      await idOf(first, UUID_Y),
      UUID_Y,
      "Y by its UUID from L1: not X through X's link code",
    );
    t.equal(
      await idOf(second, UUID_Y),
      UUID_Y,
      'another instance, Y by its UUID from Redis: not X',
    );
    // A list page stores both recordings (and X's code) again; Y's UUID still means Y.
    t.equal((await first.get(PREFIX, { key })).status, 200, 'the list page');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = origin.requests;
    t.equal(await idOf(first, UUID_Y), UUID_Y, 'after the list page: Y');
    t.equal(await idOf(first, UUID_X), UUID_X, 'and X');
    t.equal(origin.requests, before, 'both from the cache');
    t.equal(
      await idOf(second, UUID_X.toUpperCase()),
      UUID_X,
      'an upper-case UUID is the same UUID',
    );
  },
);
