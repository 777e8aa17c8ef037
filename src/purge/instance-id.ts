/** How purge receipts name this instance (server.instanceId, DESIGN A10). */
import { hostname } from 'node:os';

/**
 * The configured id, or the host name and the process id (a worker: its primary's, which the
 * workers share); a worker adds `/worker-<slot>`, so each of them is named apart.
 */
export function instanceIdOf(configured: string | null, worker?: number): string {
  const pid = worker === undefined ? process.pid : process.ppid;
  const base = configured ?? `${hostname()}-${pid}`;
  return worker === undefined ? base : `${base}/worker-${worker}`;
}
