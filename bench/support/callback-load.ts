import { createHmac, randomUUID } from 'node:crypto';
import https from 'node:https';

/** A callback body of a typical size (a small result and trace). */
export function callbackBody(invocationId: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      invocationId,
      status: 'SUCCEEDED',
      result: { ok: true, orderId: 'o-12345', total: 129.5, items: ['a', 'b', 'c'] },
      trace: { runtime: 'runline-engine/1', graph: 'workflow', startedAt: new Date().toISOString(), completedAt: new Date().toISOString(), durationMs: 3, steps: 2 },
    }),
  );
}

/**
 * The baseline: a raw signed-POST loop to the same receiver, `concurrency` requests in flight
 * over keep-alive connections, each body signed with HMAC-SHA256 like a callback. Returns
 * requests per second.
 */
export async function signedPostLoop(url: string, ca: string, count: number, concurrency: number): Promise<number> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency, ca });
  const target = new URL(url);
  let next = 0;
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const body = callbackBody(randomUUID());
      const request = https.request(
        {
          agent,
          method: 'POST',
          hostname: target.hostname,
          port: target.port,
          path: target.pathname,
          headers: {
            'content-type': 'application/json',
            'content-length': String(body.length),
            'x-service-signature': createHmac('sha256', 'bench-secret').update(body).digest('hex'),
          },
        },
        (response) => {
          response.on('data', () => undefined);
          response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`status ${response.statusCode}`))));
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  const worker = async () => {
    while (next < count) {
      next++;
      await post();
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return count / seconds;
}
