/**
 * How the client proves who it is:
 * - a string: an API token or a console JWT, as `Authorization: Bearer <it>`;
 * - `{ apiKey }`: an API token in the `x-api-key` header;
 * - undefined: nothing (the inbound hooks, or to see the refusal).
 */
export type RunlineAuth = string | { apiKey: string } | undefined;
