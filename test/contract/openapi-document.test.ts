/**
 * The OpenAPI description is a valid OpenAPI 3.1 document (checked by a maintained validator),
 * names every stable error code the gateway can answer with, and is what the admin listener serves.
 */
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERROR_CODES } from '../../src/errors.js';
import { readOpenApiDocument } from '../../src/openapi/document.js';
import { startGateway } from '../helpers/gateway.js';
import { configWith } from '../../src/config/load.js';
import { MAX_PAGE_NUMBER } from '../../src/http/request/paging.js';

/** Codes answered by the admin listener only (src/http/admin-handler.ts, src/cluster/primary-admin.ts). */
const ADMIN_CODES = [
  'PURGE_DISABLED',
  'ADMIN_UNAUTHORIZED',
  'PAYLOAD_TOO_LARGE',
  'PURGE_UNAVAILABLE',
  'NOT_READY',
  'WORKSPACE_NOT_OBSERVED',
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

void t.test('paging bounds and defaults are the ones the gateway enforces', (t) => {
  const document = readOpenApiDocument() as any;
  const { listing } = configWith({});
  const pageNumber = document.components.parameters.PageNumber.schema;
  const pageSize = document.components.parameters.PageSize.schema;
  t.same(
    pageNumber,
    { type: 'integer', minimum: 1, maximum: MAX_PAGE_NUMBER, default: 1 },
    'page_number',
  );
  t.same(
    pageSize,
    {
      type: 'integer',
      minimum: 1,
      maximum: listing.maxPageSize,
      default: listing.defaultPageSize,
    },
    'page_size',
  );
  const parameters = document.paths['/admin/cache'].get.parameters as Array<{
    name: string;
    schema: unknown;
  }>;
  const inspection = Object.fromEntries(parameters.map((p) => [p.name, p.schema]));
  t.same(inspection.page_number, pageNumber, 'GET /admin/cache page_number');
  t.same(inspection.page_size, pageSize, 'GET /admin/cache page_size');
  t.end();
});
