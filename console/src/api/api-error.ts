/** A refusal of the console API, with the message it gave, or a failure to reach it. */
export class ApiError extends Error {
  constructor(
    message: string,
    /** The HTTP status; 0 when the API could not be reached. */
    readonly status: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The API's own words when it gave some (`{error}`), else the status line. */
export function messageOf(body: unknown, response: Response): string {
  if (body && typeof body === 'object' && 'error' in body && typeof body.error === 'string') return body.error;
  return `The server answered ${response.status} ${response.statusText}`.trim();
}
