/**
 * The OpenAPI document lists exactly the admin routes the gateway serves (src/http/admin-routes.ts),
 * each with its methods and every status it can answer with, workers or not.
 */
import t from 'tap';
import { ADMIN_ROUTES, adminRoute } from '../../src/http/admin-routes.js';
import { readOpenApiDocument } from '../../src/openapi/document.js';

const METHODS = ['get', 'head', 'post', 'put', 'delete', 'patch', 'options'];

void t.test('every admin route, method and status is in the document, and no other', (t) => {
  const paths = (readOpenApiDocument() as any).paths as Record<string, any>;
  const documented = Object.keys(paths).filter((path) => !path.startsWith('/api/'));
  t.same(documented.sort(), Object.keys(ADMIN_ROUTES).sort(), 'the same paths');
  for (const [path, route] of Object.entries(ADMIN_ROUTES)) {
    const item = paths[path] ?? {};
    t.same(
      METHODS.filter((method) => item[method] !== undefined),
      route.methods.map((method) => method.toLowerCase()),
      `${path}: methods`,
    );
    for (const method of route.methods)
      t.same(
        Object.keys(item[method.toLowerCase()]?.responses ?? {}).map(Number),
        route.statuses,
        `${method} ${path}: statuses`,
      );
  }
  t.end();
});

void t.test('routing: a route, a 405 with Allow, or none', (t) => {
  t.same(adminRoute('/metrics', 'GET'), { path: '/metrics' });
  t.same(adminRoute('/metrics', 'HEAD'), { path: '/metrics' });
  t.same(adminRoute('/metrics', 'POST'), { allow: 'GET, HEAD' });
  t.same(adminRoute('/admin/purge', 'GET'), { allow: 'POST' });
  t.same(adminRoute('/admin/purge', undefined), { allow: 'POST' });
  t.equal(adminRoute('/admin', 'GET'), null);
  t.equal(adminRoute('/toString', 'GET'), null, 'no inherited property is a route');
  t.equal(adminRoute('/__proto__', 'GET'), null);
  t.end();
});
