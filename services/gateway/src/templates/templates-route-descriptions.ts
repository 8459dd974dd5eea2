import { type AnswerDescription, consolePipeline, projectRoute, type RouteDescription, unavailable, withMessages } from '../platform/api-docs/route-description.js';
import { listOf, ref } from '../platform/api-docs/answer-schemas.js';
import { ANSWERS, REQUESTS } from './templates-examples.js';
import { TEMPLATE_ERRORS } from './template-rules.js';

const templateBody: AnswerDescription = { description: '', messages: [TEMPLATE_ERRORS.bodyTooLarge, TEMPLATE_ERRORS.tooMany, 'endpoint … is not available for … projects', 'A template must not hold secrets (found: …)'] };

/** The templates routes' descriptions, keyed by `METHOD /path` as the code declares each route. */
export const TEMPLATES_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  // ---- Console: the template library and the request example builder.
  [`GET ${projectRoute}/templates`]: {
    summary: 'The project’s request templates',
    description: 'Saved request bodies, each for one run endpoint of the project’s type. Caller: any member.',
    tag: 'Templates',
    responses: { 200: { description: 'The templates.', schema: listOf(ref('Template')), example: ANSWERS.templates }, ...consolePipeline({ project: true }), ...unavailable() },
  },
  [`GET ${projectRoute}/templates/{id}`]: {
    summary: 'One template',
    description: 'One saved request body. Caller: any member.',
    tag: 'Templates',
    responses: { 200: { description: 'The template.', schema: 'Template', example: ANSWERS.template }, ...withMessages(consolePipeline({ project: true }), 404, [TEMPLATE_ERRORS.notFound]), ...unavailable() },
  },
  [`POST ${projectRoute}/templates`]: {
    summary: 'Adds a template',
    description: 'Saves a request body for one run endpoint (`flows.trigger`, `automations.trigger-async`, …) of the project’s type; a body that holds a secret is refused. Caller: a member with edit access.',
    tag: 'Templates',
    requestExample: REQUESTS.template,
    responses: {
      201: { description: 'Added.', schema: 'Template', example: ANSWERS.template },
      ...withMessages(consolePipeline({ level: 'edit', project: true, body: true }), 400, [...templateBody.messages!]),
      ...unavailable(),
    },
  },
  [`PUT ${projectRoute}/templates/{id}`]: {
    summary: 'Replaces a template',
    description: 'Replaces the template’s name, endpoint and body, with the same rules as adding one. Caller: a member with edit access.',
    tag: 'Templates',
    requestExample: REQUESTS.template,
    responses: {
      200: { description: 'Replaced.', schema: 'Template', example: ANSWERS.template },
      ...withMessages(withMessages(consolePipeline({ level: 'edit', project: true, body: true }), 400, [...templateBody.messages!]), 404, [TEMPLATE_ERRORS.notFound]),
      ...unavailable(),
    },
  },
  [`DELETE ${projectRoute}/templates/{id}`]: {
    summary: 'Deletes a template',
    description: 'Deletes the template. Caller: a member with edit access.',
    tag: 'Templates',
    responses: { 204: { description: 'Deleted.', noBody: true }, ...withMessages(consolePipeline({ level: 'edit', project: true }), 404, [TEMPLATE_ERRORS.notFound]), ...unavailable() },
  },
};
