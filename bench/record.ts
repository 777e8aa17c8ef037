/**
 * HTTP from the bench side: recording a gateway's answers for the references to replay, and
 * timing requests sent one after another over one keep-alive connection (unloaded latency).
 */
import { Agent, request } from 'node:http';

/** One recorded answer: the headers as sent, minus those node:http adds itself; the body base64. */
export interface Answer {
  path: string;
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

/** Headers node:http adds to every answer by itself; a replay must not send them twice. */
const NODE_ADDED = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/** One GET; resolves with the answer and how long it took (ms). */
export function get(
  port: number,
  path: string,
  headers: Record<string, string>,
  agent?: Agent,
): Promise<Answer & { ms: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          if (!NODE_ADDED.has(res.rawHeaders[i]!.toLowerCase()))
            pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        resolve({
          path,
          status: res.statusCode ?? 0,
          headers: pairs,
          body: Buffer.concat(chunks).toString('base64'),
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Asks a gateway for each path twice (a miss, then a hit) and keeps the hits' answers. */
export async function recordHits(
  port: number,
  paths: readonly string[],
  headers: Record<string, string>,
): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const path of paths) {
    await get(port, path, headers);
    const { ms: _, ...answer } = await get(port, path, headers);
    if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`);
    answers.push(answer);
  }
  return answers;
}

/** Sends `count` GETs one after another over one keep-alive connection; their times, ms, sorted. */
export async function timedGets(
  port: number,
  path: (i: number) => string,
  headers: Record<string, string>,
  count: number,
): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const answer = await get(port, path(i), headers, agent);
      if (answer.status !== 200) throw new Error(`${path(i)} answered ${answer.status}`);
      times.push(answer.ms);
    }
  } finally {
    agent.destroy();
  }
  return times.sort((a, b) => a - b);
}
