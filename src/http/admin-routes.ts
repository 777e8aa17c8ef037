/**
 * The admin listener's routes, written once: each path, the methods it serves and every status
 * it can answer with, a single process's or a cluster primary's (which answers 503 while no
 * worker is ready, and 500 when forwarding fails unexpectedly). Both admin handlers route through
 * {@link adminRoute}, and test/contract holds the OpenAPI document to this table.
 */

/** One admin route. */
export interface AdminRoute {
  /** The methods served; HEAD is served wherever GET is (RFC 9110 §9.3.2). */
  readonly methods: readonly string[];
  /** Every status an answer on this route can have, with workers or without. */
  readonly statuses: readonly number[];
}

export const ADMIN_ROUTES = {
  '/metrics': { methods: ['GET', 'HEAD'], statuses: [200, 405, 500] },
  '/healthz': { methods: ['GET', 'HEAD'], statuses: [200, 405] },
  '/readyz': { methods: ['GET', 'HEAD'], statuses: [200, 405, 500, 503] },
  '/openapi.json': { methods: ['GET', 'HEAD'], statuses: [200, 405, 500, 503] },
  '/admin/purge': { methods: ['POST'], statuses: [200, 202, 400, 401, 403, 405, 413, 500, 503] },
  '/admin/cache': { methods: ['GET', 'HEAD'], statuses: [200, 400, 401, 403, 405, 500, 503] },
  '/admin/ttl-advice': {
    methods: ['GET', 'HEAD'],
    statuses: [200, 400, 401, 403, 404, 405, 500, 503],
  },
} as const satisfies Record<string, AdminRoute>;

/** A path the admin listener serves. */
export type AdminPath = keyof typeof ADMIN_ROUTES;

/** Where an admin request goes: its route, a 405 with the route's Allow value, or null (404). */
export type AdminRouting = { readonly path: AdminPath } | { readonly allow: string } | null;

/** Routes a request's path (query already cut off) and method. */
export function adminRoute(path: string, method: string | undefined): AdminRouting {
  if (!Object.hasOwn(ADMIN_ROUTES, path)) return null;
  const route: AdminRoute = ADMIN_ROUTES[path as AdminPath];
  return route.methods.includes(method ?? '')
    ? { path: path as AdminPath }
    : { allow: route.methods.join(', ') };
}
