/** A GET on a connection of its own, for tests of node:cluster workers. */
import { get as httpGet } from 'node:http';

/** What a fresh-connection GET answered. */
export interface FreshAnswer {
  status: number;
  cacheStatus: string;
}

/** One GET on a connection of its own: node:cluster hands each new connection to the next worker. */
export function getFresh(port: number, path: string, key: string): Promise<FreshAnswer> {
  return new Promise((resolve, reject) => {
    httpGet(
      {
        host: '127.0.0.1',
        port,
        path,
        agent: false,
        headers: { host: 'acme.localhost', 'x-api-key': key },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            cacheStatus: String(res.headers['cache-status']),
          }),
        );
      },
    ).on('error', reject);
  });
}
