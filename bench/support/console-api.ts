import jwt from 'jsonwebtoken';

/** One call of the console API; `expected` the status it must answer (any 2xx when absent). */
export type ConsoleApiCall = (method: string, path: string, body?: unknown, expected?: number) => Promise<Record<string, unknown>>;

/**
 * Calls the console API as a benchmark's owner (a console JWT signed with the system's secret,
 * valid `validForSeconds`: long enough for the benchmark's whole run),
 * as any client would to set up what a benchmark runs against; a call answered otherwise than
 * expected throws with the answer.
 */
export function consoleApi(gatewayUrl: string, consoleJwtSecret: string, validForSeconds = 3600): ConsoleApiCall {
  const consoleJwt = jwt.sign({ sub: 'bench-owner', roles: [] }, consoleJwtSecret, { algorithm: 'HS256', expiresIn: validForSeconds });
  return async (method, path, body, expected) => {
    const response = await fetch(gatewayUrl + path, {
      method,
      headers: { authorization: `Bearer ${consoleJwt}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const answered = expected === undefined ? response.ok : response.status === expected;
    if (!answered) throw new Error(`${method} ${path}: ${expected === undefined ? '' : `expected ${expected}, got `}${response.status} ${text}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
}
