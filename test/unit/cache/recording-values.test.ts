// Where an entry lives and what storing it writes: a recording under its lower-case UUID with aliases, anything else under the key it was asked by.
import t from 'tap';
import { listKey, recordingKey } from '../../../src/cache/keys.js';
import { ownKey, recordingValues, valuesAskedBy, valuesFor } from '../../../src/cache/recording-values.js';
import { makeEntry } from '../../helpers/redis-tier.js';

const UUID = '0B0F3F8E-6C1A-4A62-9A55-1B7D5E1F2A3C';
const OWN = recordingKey(UUID.toLowerCase());
const LINK = recordingKey('abcDEF_12');
const recording = makeEntry({ recordingId: UUID, linkId: 'abcDEF_12' });
const alias = { kind: 'alias', target: OWN, staleUntil: recording.staleUntil };

void t.test('a recording lives under its lower-case UUID, reachable by its link code', (t) => {
  t.equal(ownKey(recording, LINK), OWN);
  t.same(valuesFor(recording, LINK), [[OWN, recording], [LINK, alias]]);
  t.same(recordingValues(recording), [[OWN, recording], [LINK, alias]]);
  t.end();
});

void t.test('asked by another spelling: valuesAskedBy also points that key at the entry; valuesFor does not', (t) => {
  const upper = recordingKey(UUID);
  t.same(valuesAskedBy(recording, upper), [[OWN, recording], [LINK, alias], [upper, alias]]);
  t.same(valuesAskedBy(recording, LINK), [[OWN, recording], [LINK, alias]], 'no second alias for the link code');
  t.same(valuesFor(recording, upper), [[OWN, recording], [LINK, alias]]);
  t.end();
});

void t.test('a list page or a remembered 404 lives under the key it was asked by, alone', (t) => {
  const page = makeEntry({ recordingId: null, linkId: null });
  const key = listKey(2, 30);
  t.equal(ownKey(page, key), key);
  t.same(valuesFor(page, key), [[key, page]]);
  t.same(valuesAskedBy(page, key), [[key, page]]);
  t.same(recordingValues(page), [], 'not a recording: nothing to store for it on its own');
  t.end();
});
