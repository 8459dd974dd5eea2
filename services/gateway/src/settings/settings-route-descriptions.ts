import { consolePipeline, projectRoute, type RouteDescription, unavailable } from '../platform/api-docs/route-description.js';
import { ANSWERS, REQUESTS } from './settings-examples.js';

/** The settings routes' descriptions, keyed by `METHOD /path` as the code declares each route. */
export const SETTINGS_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  [`GET ${projectRoute}/api-settings`]: {
    summary: 'The project’s API settings',
    description: 'The master switch (Enable External API), the default enrollment and on-error policies, the default callback and the project’s rate limit. The callback secret is never shown, only whether it is set. Caller: any member.',
    tag: 'Projects',
    responses: {
      200: { description: 'The settings (the callback secret only as `defaultCallbackSecretSet`).', schema: 'ApiSettings', example: ANSWERS.apiSettings },
      ...consolePipeline({ project: true }),
      ...unavailable(),
    },
  },
  [`PATCH ${projectRoute}/api-settings`]: {
    summary: 'Changes the project’s API settings',
    description: 'Changes the settings sent and leaves the others; null clears the default callback, its secret and the rate limit (back to the plan’s). Switching the external API off refuses every token call with 403 at once. Caller: a member with edit access.',
    tag: 'Projects',
    requestExample: REQUESTS.updateApiSettings,
    responses: { 200: { description: 'The settings after the change.', schema: 'ApiSettings', example: ANSWERS.apiSettings }, ...consolePipeline({ level: 'edit', project: true, body: true }), ...unavailable() },
  },
};
