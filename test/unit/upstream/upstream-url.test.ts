// The baseUrl template: workspace in host or path, id encoding, bounded metric label, *.localhost lookup.
import { lookup } from 'node:dns';
import t from 'tap';
import { asWorkspaceId, type WorkspaceId } from '../../../src/brands.js';
import {
  listTarget,
  loopbackAwareLookup,
  parseBaseUrl,
  recordingTarget,
} from '../../../src/upstream/upstream-url.js';

const acme = asWorkspaceId('acme') as WorkspaceId;

void t.test('{workspace} in the host', (t) => {
  const template = parseBaseUrl('https://{workspace}.recordings.internal/api/external/v2');
  t.same(listTarget(template, acme, { pageNumber: 2, pageSize: 30 }), {
    origin: 'https://acme.recordings.internal',
    path: '/api/external/v2/recordings?page_number=2&page_size=30',
  });
  t.equal(
    template.label,
    'https://{workspace}.recordings.internal',
    'label keeps the placeholder: bounded',
  );
  t.end();
});

void t.test('{workspace} in the path, trailing slash and port', (t) => {
  const template = parseBaseUrl('http://store:8080/ws/{workspace}/api/external/v2/');
  t.same(recordingTarget(template, acme, '0b9c5e52-6f0e-4f7a-9a3c-1d2e3f405162'), {
    origin: 'http://store:8080',
    path: '/ws/acme/api/external/v2/recordings/0b9c5e52-6f0e-4f7a-9a3c-1d2e3f405162',
  });
  t.equal(template.label, 'http://store:8080');
  t.end();
});

void t.test('the id is one encoded path segment', (t) => {
  const template = parseBaseUrl('http://store/{workspace}');
  t.equal(recordingTarget(template, acme, '../x?y#z').path, '/acme/recordings/..%2Fx%3Fy%23z');
  t.end();
});

void t.test('userinfo never reaches the metric label', (t) => {
  t.equal(
    parseBaseUrl('https://user:secret@{workspace}.store/v2').label,
    'https://{workspace}.store',
  );
  t.throws(() => parseBaseUrl('/relative/{workspace}'), TypeError);
  t.end();
});

void t.test(
  '*.localhost resolves to loopback (RFC 6761 §6.3); other names go to DNS',
  async (t) => {
    const one = await new Promise<unknown[]>((resolve, reject) =>
      loopbackAwareLookup('acme.localhost', { family: 0 }, (err, address, family) =>
        err ? reject(err) : resolve([address, family]),
      ),
    );
    t.same(one, ['127.0.0.1', 4]);
    const all = await new Promise<unknown>((resolve, reject) =>
      loopbackAwareLookup('ACME.Localhost.', { all: true }, (err, addresses) =>
        err ? reject(err) : resolve(addresses),
      ),
    );
    t.same(all, [{ address: '127.0.0.1', family: 4 }]);
    const viaDns = await new Promise<string>((resolve, reject) =>
      loopbackAwareLookup('127.0.0.2', {}, (err, address) =>
        err ? reject(err) : resolve(address as string),
      ),
    );
    const expected = await new Promise<string>((resolve) =>
      lookup('127.0.0.2', (_err, address) => resolve(address)),
    );
    t.equal(viaDns, expected);
  },
);
