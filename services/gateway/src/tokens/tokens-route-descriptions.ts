import { consolePipeline, projectRoute, type RouteDescription, unavailable } from '../platform/api-docs/route-description.js';
import { listOf, ref } from '../platform/api-docs/answer-schemas.js';
import { ANSWERS, REQUESTS } from './tokens-examples.js';
import { ACCESS_ERRORS } from '../platform/http-guards/console-access.js';

/** The tokens routes' descriptions, keyed by `METHOD /path` as the code declares each route. */
export const TOKENS_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  [`POST ${projectRoute}/api-tokens`]: {
    summary: 'Issues an API token (shown once)',
    description: 'Issues a token of this project with the given scopes (and an optional expiry). The token is in this answer only; it is stored hashed. Caller: a member with edit access.',
    tag: 'API tokens',
    requestExample: REQUESTS.createApiToken,
    responses: { 201: { description: 'Issued.', schema: 'IssuedApiToken', example: ANSWERS.issuedToken }, ...consolePipeline({ level: 'edit', project: true, body: true }), ...unavailable() },
  },
  [`GET ${projectRoute}/api-tokens`]: {
    summary: 'The project’s live tokens, with their last use',
    description: 'Each token that is not revoked, by name and prefix, with its scopes, expiry and last use; never the token itself. Caller: any member.',
    tag: 'API tokens',
    responses: { 200: { description: 'The tokens (never the secrets).', schema: listOf(ref('ApiToken')), example: ANSWERS.tokens }, ...consolePipeline({ project: true }), ...unavailable() },
  },
  [`DELETE ${projectRoute}/api-tokens/{tokenId}`]: {
    summary: 'Revokes a token; it is refused on its next call',
    description: 'Revokes the token: its next call gets 401. Caller: a member with edit access.',
    tag: 'API tokens',
    responses: {
      204: { description: 'Revoked.', noBody: true },
      ...consolePipeline({ level: 'edit', project: true }),
      404: { description: 'No such organization, project or token.', messages: [ACCESS_ERRORS.organizationNotFound, ACCESS_ERRORS.projectNotFound, 'API token not found'] },
      ...unavailable(),
    },
  },
};
