import { consolePipeline, type RouteDescription, unavailable } from '../platform/api-docs/route-description.js';
import { listOf, ref } from '../platform/api-docs/answer-schemas.js';
import { ANSWERS, REQUESTS } from './organizations-examples.js';

/** The organizations routes' descriptions, keyed by `METHOD /path` as the code declares each route. */
export const ORGANIZATIONS_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  // ---- Console: organizations and plans.
  'POST /v1/orgs': {
    summary: 'Creates an organization; the caller becomes its OWNER',
    description: 'Any signed-in user (console JWT) may create an organization; they become its OWNER.',
    tag: 'Organizations',
    requestExample: REQUESTS.createOrganization,
    responses: { 201: { description: 'Created.', schema: 'Organization', example: ANSWERS.organization }, ...consolePipeline({ org: false, body: true }), ...unavailable() },
  },
  'GET /v1/orgs': {
    summary: 'The caller’s organizations, with the caller’s role',
    description: 'Every organization the signed-in user is a member of, with their role in it (OWNER, EDITOR or VIEWER).',
    tag: 'Organizations',
    responses: { 200: { description: 'The organizations.', schema: listOf(ref('OrganizationRow')), example: ANSWERS.organizations }, ...consolePipeline({ org: false }), ...unavailable() },
  },
  'PUT /v1/orgs/{orgId}/plan': {
    summary: 'Sets the organization’s plan (platform-admin)',
    description: 'Sets the monthly quota, the plan’s rate limit and the renewal day; every field is required, null means “not limited by the plan”. Caller: a platform administrator (the `platform-admin` role in the console JWT).',
    tag: 'Organizations',
    requestExample: REQUESTS.setPlan,
    responses: { 200: { description: 'The plan as set.', schema: 'Plan', example: ANSWERS.plan }, ...consolePipeline({ level: 'platform-admin', body: true }), ...unavailable() },
  },
  'GET /v1/orgs/{orgId}/plan': {
    summary: 'The plan and this period’s usage (any member)',
    description: 'The plan’s limits, the start of the current billing period and the runs counted in it so far (dry runs are not counted). Caller: any member of the organization.',
    tag: 'Organizations',
    responses: { 200: { description: 'Plan and usage.', schema: 'PlanUsage', example: ANSWERS.planUsage }, ...consolePipeline(), ...unavailable('invocation') },
  },
  'POST /v1/orgs/{orgId}/members': {
    summary: 'Adds a member (OWNER)',
    description: 'Adds a user (by their sign-in subject) with a role: OWNER, EDITOR (edit access to every project) or VIEWER (read only). Caller: an OWNER of the organization.',
    tag: 'Organizations',
    requestExample: REQUESTS.addMember,
    responses: {
      201: { description: 'Added.', schema: 'Member', example: ANSWERS.member },
      ...consolePipeline({ level: 'owner', body: true }),
      409: { description: 'The user already is a member.', messages: ['User is already a member of this organization'] },
      ...unavailable(),
    },
  },
};
