import http from 'node:http';

/** Where and as whom the runs are scheduled. */
export interface AcceptanceTarget {
  /** The trigger-async URL. */
  url: string;
  token: string;
  connections: number;
}

/** What a batch of scheduled runs gave: every answer 202 SCHEDULED, or the first that was not. */
export interface AcceptanceResult {
  /** The accepted runs' invocation ids, at the index of their due time in `dueTimes`. */
  invocationIds: string[];
  /** Of the 202 answers, milliseconds with fractions. */
  latenciesMs: number[];
  /** From the first request to the last answer. */
  seconds: number;
  /** The first wrong answer or error; acceptance stops there. */
  failure?: string;
}

const ANSWER_TIMEOUT_MS = 30_000;
const PROGRESS_EVERY_MS = 10_000;

/**
 * Schedules one run per due time through the API, at `connections` requests in flight, each
 * with body `{"payload":{"n":…},"runAt":"<ISO with Z>"}`. Every answer must be 202 with
 * `status: "SCHEDULED"` and `scheduledFor` equal to the runAt sent; the first that is not stops
 * the batch. Plain node:http with keep-alive: each request's body differs (its runAt), and the
 * answer's body is checked, not only its status.
 */
export async function acceptScheduledRuns(target: AcceptanceTarget, dueTimes: number[], label: string): Promise<AcceptanceResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: target.connections });
  const url = new URL(target.url);
  const invocationIds = new Array<string>(dueTimes.length);
  const latenciesMs: number[] = [];
  let next = 0;
  let failure: string | undefined;
  const started = performance.now();
  const progress = setInterval(() => {
    const seconds = (performance.now() - started) / 1000;
    console.log(`  ${label}: ${latenciesMs.length} of ${dueTimes.length} accepted after ${seconds.toFixed(0)} s (${(latenciesMs.length / seconds).toFixed(0)}/s)`);
  }, PROGRESS_EVERY_MS);

  const worker = async (): Promise<void> => {
    while (failure === undefined && next < dueTimes.length) {
      const index = next++;
      const runAt = new Date(dueTimes[index] ?? Number.NaN).toISOString();
      const body = JSON.stringify({ payload: { n: index }, runAt });
      const sent = performance.now();
      try {
        const answer = await post(agent, url, target.token, body);
        const latencyMs = performance.now() - sent;
        const problem = problemWith(answer, runAt);
        if (problem !== undefined) {
          failure ??= `run ${index} (runAt ${runAt}): ${problem}`;
          return;
        }
        invocationIds[index] = (JSON.parse(answer.text) as { invocationId: string }).invocationId;
        latenciesMs.push(latencyMs);
      } catch (error) {
        failure ??= `run ${index} (runAt ${runAt}): ${(error as Error).message}`;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: target.connections }, worker));
  } finally {
    clearInterval(progress);
    agent.destroy();
  }
  return { invocationIds, latenciesMs, seconds: (performance.now() - started) / 1000, failure };
}

/** What is wrong with an answer to a scheduled trigger, or undefined when it is the expected one. */
function problemWith(answer: { status: number; text: string }, runAt: string): string | undefined {
  const shown = `${answer.status} ${answer.text.slice(0, 300)}`;
  if (answer.status !== 202) return `expected 202, got ${shown}`;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `the 202 body is not JSON: ${shown}`;
  }
  if (typeof body !== 'object' || body === null) return `unexpected body: ${shown}`;
  const { invocationId, status, scheduledFor } = body as Record<string, unknown>;
  if (status !== 'SCHEDULED') return `expected status SCHEDULED: ${shown}`;
  if (typeof invocationId !== 'string' || invocationId === '') return `no invocationId: ${shown}`;
  if (scheduledFor !== runAt) return `scheduledFor is not the runAt sent: ${shown}`;
  return undefined;
}

function post(agent: http.Agent, url: URL, token: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.setTimeout(ANSWER_TIMEOUT_MS, () => request.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`)));
    request.on('error', reject);
    request.end(body);
  });
}
