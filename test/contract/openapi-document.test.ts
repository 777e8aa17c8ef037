/**
 * The OpenAPI description is a valid OpenAPI 3.1 document (checked by a maintained validator),
 * names every stable error code the gateway can answer with, and is what the admin listener serves.
 */
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERROR_CODES } from '../../src/errors.js';
import { readOpenApiDocument } from '../../src/openapi/document.js';
import { startGateway } from '../helpers/gateway.js';

/** Codes answered by the admin listener only (src/http/admin-handler.ts). */
const ADMIN_CODES = [
  'PURGE_DISABLED',
  'ADMIN_UNAUTHORIZED',
  'PAYLOAD_TOO_LARGE',
  'PURGE_UNAVAILABLE',
];

void t.test('the document validates as OpenAPI 3.1', async (t) => {
  const document = readOpenApiDocument();
  t.equal(document['openapi'], '3.1.0');
  const validator = new Validator();
  const result = await validator.validate(document);
  t.same(result.errors ?? [], [], 'no schema errors');
  t.ok(result.valid, 'valid');
  t.equal(validator.version, '3.1');
});

void t.test('every stable error code is in the Error schema, and no other', (t) => {
  const document = readOpenApiDocument() as any;
  const documented: string[] = document.components.schemas.Error.properties.code.enum;
  t.same([...documented].sort(), [...Object.keys(ERROR_CODES), ...ADMIN_CODES].sort());
  t.end();
});

void t.test('v1 operations are deprecated, v2 ones are not', (t) => {
  const paths = (readOpenApiDocument() as any).paths;
  for (const [path, item] of Object.entries<any>(paths)) {
    if (!path.startsWith('/api/')) continue;
    for (const method of ['get', 'head'])
      t.equal(item[method].deprecated === true, path.includes('/v1/'), `${method} ${path}`);
  }
  t.end();
});

void t.test('GET /openapi.json on the admin listener serves the document', async (t) => {
  const gw = await startGateway(t);
  const res = await gw.admin('/openapi.json');
  t.equal(res.status, 200);
  t.match(res.headers['content-type'], /^application\/json/);
  t.same(res.json(), readOpenApiDocument());
});
