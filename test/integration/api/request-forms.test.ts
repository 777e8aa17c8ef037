/**
 * Request forms HTTP allows answer as their plain forms: an absolute-form target (RFC 9112
 * §3.2.2) as its origin form, a percent-encoded recording id as the id it decodes to (decoded
 * exactly once); a target naming another host than Host, and an id that is not valid
 * percent-encoding, are 400 JSON errors. A 304 carries only the fields RFC 9110 §15.4.5 lists,
 * never the body's Content-Type, Content-Encoding or Content-Length.
 */
import t, { type Test } from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { openApiContract } from '../../helpers/openapi-contract.js';
import { exchange, type RawResponse } from '../hostile/raw-http.js';

const LIST = '/api/external/v2/recordings';

/** One request over a raw socket, its target written exactly as given. */
async function raw(
  port: number,
  target: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const lines = [`GET ${target} HTTP/1.1`, `Host: ${host}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  const { responses } = await exchange(port, `${lines.join('\r\n')}\r\n\r\n`, {
    timeoutMs: 10_000,
  });
  if (responses[0] === undefined) throw new Error(`no answer to ${target}`);
  return responses[0];
}

/** The response checked against the document under the origin-form path it answers for. */
function documented(t: Test, path: string, response: RawResponse): void {
  t.same(
    openApiContract().problems({
      listener: 'public',
      method: 'GET',
      path,
      status: response.status,
      headers: response.headers,
      text: response.body,
    }),
    [],
    `${path} → ${response.status} is in the document`,
  );
}

void t.test('absolute-form targets answer as their origin form', async (t) => {
  const gw = await startGateway(t);
  const host = `acme.localhost:${gw.port}`;
  const key = gw.key();
  const plain = await gw.get(`${LIST}?page_size=2`);
  t.equal(plain.status, 200);
  for (const scheme of ['http', 'HTTP', 'https']) {
    const absolute = await raw(gw.port, `${scheme}://${host}${LIST}?page_size=2`, host, {
      'X-Api-Key': key,
    });
    t.equal(absolute.status, 200, `${scheme}:// list`);
    t.same(JSON.parse(absolute.body), plain.json(), 'the same page');
    documented(t, `${LIST}?page_size=2`, absolute);
  }
  const id = gw.sim.data['acme']![0]!.id;
  const one = await raw(gw.port, `http://${host}${LIST}/${id}`, host, { 'X-Api-Key': key });
  t.equal(one.status, 200, 'recording by absolute form');
  t.equal(JSON.parse(one.body).id, id);
  // The host is case-insensitive (RFC 3986 §3.2.2).
  const upper = await raw(gw.port, `http://${host.toUpperCase()}${LIST}/${id}`, host, {
    'X-Api-Key': key,
  });
  t.equal(upper.status, 200, 'host compared without case');
});

void t.test('an absolute-form target naming another host than Host: 400 JSON', async (t) => {
  const gw = await startGateway(t);
  const host = `acme.localhost:${gw.port}`;
  for (const target of [
    `http://globex.localhost:${gw.port}${LIST}`,
    `http://acme.localhost:1${LIST}`,
    `http://user@${host}${LIST}`,
    `ftp://${host}${LIST}`,
  ]) {
    const answer = await raw(gw.port, target, host, { 'X-Api-Key': gw.key('globex') });
    t.equal(answer.status, 400, target);
    t.match(
      JSON.parse(answer.body),
      { code: target.startsWith('ftp:') ? 'BAD_REQUEST' : 'BAD_HOST' },
      target,
    );
    documented(t, LIST, answer);
  }
  t.equal(gw.sim.counters.total, 0, 'no upstream call');
});

void t.test('a percent-encoded recording id answers as the id it decodes to', async (t) => {
  const gw = await startGateway(t);
  const recording = gw.sim.data['acme']!.find((r) => r.public_link_id !== null)!;
  const code = recording.public_link_id!;
  const encoded = [...code].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
  const plain = await gw.get(`${LIST}/${code}`);
  t.equal(plain.status, 200);
  const first = await gw.get(`${LIST}/%${code.charCodeAt(0).toString(16)}${code.slice(1)}`);
  t.equal(first.status, 200, 'first character encoded');
  t.same(first.json(), plain.json());
  const whole = await gw.get(`${LIST}/${encoded}`);
  t.equal(whole.status, 200, 'every character encoded');
  t.equal(whole.json().id, recording.id);
  const uuid = await gw.get(
    `${LIST}/%${recording.id.charCodeAt(0).toString(16)}${recording.id.slice(1)}`,
  );
  t.equal(uuid.status, 200, 'a UUID, encoded');
  t.equal(uuid.json().id, recording.id);
  // Decoded once: "%2561" is "%61", which is no link code.
  const twice = await gw.get(`${LIST}/%25${code.charCodeAt(0).toString(16)}${code.slice(1)}`);
  t.equal(twice.status, 404, 'decoded exactly once');
  t.match(twice.json(), { code: 'RECORDING_NOT_FOUND' });
});

void t.test('an id that is not valid percent-encoding: 400 JSON, no upstream call', async (t) => {
  const gw = await startGateway(t);
  const before = gw.sim.counters.total;
  for (const id of ['%zz', 'abc%', 'abc%4', '%C3%28', '%FF']) {
    const answer = await gw.get(`${LIST}/${id}`);
    t.equal(answer.status, 400, id);
    t.match(answer.json(), { code: 'BAD_REQUEST' }, id);
  }
  t.equal(gw.sim.counters.total, before, 'no upstream call');
});

void t.test('a 304 carries no Content-Type, Content-Encoding or Content-Length', async (t) => {
  const gw = await startGateway(t);
  for (const encoding of ['identity', 'gzip', 'br']) {
    const first = await gw.get(`${LIST}?page_size=3`, { headers: { 'accept-encoding': encoding } });
    t.equal(first.status, 200);
    const etag = first.headers['etag'] as string;
    const host = `acme.localhost:${gw.port}`;
    const notModified = await raw(gw.port, `${LIST}?page_size=3`, host, {
      'X-Api-Key': gw.key(),
      'Accept-Encoding': encoding,
      'If-None-Match': etag,
    });
    t.equal(notModified.status, 304, encoding);
    for (const name of ['content-type', 'content-encoding', 'content-length', 'transfer-encoding'])
      t.equal(notModified.headers[name], undefined, `${encoding}: no ${name}`);
    for (const name of ['etag', 'cache-control', 'vary', 'age'])
      t.ok(notModified.headers[name], `${encoding}: ${name} kept`);
    documented(t, `${LIST}?page_size=3`, notModified);
  }
});
