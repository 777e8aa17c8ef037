// Where an entry lives and what storing it writes: a recording under its lower-case UUID with aliases, anything else under the key it was asked by.
import t from 'tap';
import { listKey, recordingKey } from '../../../../src/cache/entry/keys.js';
import {
  ownKey,
  recordingValues,
  valuesAskedBy,
  valuesFor,
} from '../../../../src/cache/entry/recording-values.js';
import { makeEntry } from '../../../helpers/redis-tier.js';

const UUID = '0B0F3F8E-6C1A-4A62-9A55-1B7D5E1F2A3C';
const OWN = recordingKey(UUID.toLowerCase());
const LINK = recordingKey('abcDEF_12');
const recording = makeEntry({ recordingId: UUID, linkId: 'abcDEF_12' });
const alias = { kind: 'alias', target: OWN, staleUntil: recording.staleUntil };

void t.test('a recording lives under its lower-case UUID, reachable by its link code', (t) => {
  t.equal(ownKey(recording, LINK), OWN);
  t.same(valuesFor(recording, LINK), [
    [OWN, recording],
    [LINK, alias],
  ]);
  t.same(recordingValues(recording), [
    [OWN, recording],
    [LINK, alias],
  ]);
  t.end();
});

void t.test(
  'asked by a link code the upstream answered with this recording: valuesAskedBy points that code at it; valuesFor does not',
  (t) => {
    const other = recordingKey('other-code');
    t.same(valuesAskedBy(recording, other), [
      [OWN, recording],
      [LINK, alias],
      [other, alias],
    ]);
    t.same(
      valuesAskedBy(recording, LINK),
      [
        [OWN, recording],
        [LINK, alias],
      ],
      'no second alias for the link code',
    );
    t.same(valuesFor(recording, other), [
      [OWN, recording],
      [LINK, alias],
    ]);
    t.end();
  },
);

void t.test(
  'UUIDs and link codes are separate key spaces: no link code can answer for a UUID',
  (t) => {
    t.equal(recordingKey(UUID), OWN, 'a UUID in any case is one key');
    const shadow = makeEntry({
      recordingId: '11111111-2222-4333-8444-555555555555',
      linkId: UUID.toLowerCase(),
    });
    const shadowOwn = recordingKey('11111111-2222-4333-8444-555555555555');
    const stored = valuesFor(shadow, shadowOwn).map(([key]) => key);
    t.notOk(
      stored.includes(OWN),
      "a link code spelling another recording's UUID is not stored under that UUID",
    );
    t.same(
      valuesAskedBy(shadow, OWN).map(([key]) => key),
      stored,
      'nor when the upstream answered that UUID with it',
    );
    t.end();
  },
);

void t.test('a list page or a remembered 404 lives under the key it was asked by, alone', (t) => {
  const page = makeEntry({ recordingId: null, linkId: null });
  const key = listKey(2, 30);
  t.equal(ownKey(page, key), key);
  t.same(valuesFor(page, key), [[key, page]]);
  t.same(valuesAskedBy(page, key), [[key, page]]);
  t.same(recordingValues(page), [], 'not a recording: nothing to store for it on its own');
  t.end();
});
