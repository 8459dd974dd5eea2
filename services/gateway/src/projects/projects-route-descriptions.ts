import { bodyMessages, consolePipeline, projectRoute, type RouteDescription, unavailable, versionError, withMessages } from '../platform/api-docs/route-description.js';
import { listOf, ref } from '../platform/api-docs/answer-schemas.js';
import { ANSWERS, REQUESTS } from './projects-examples.js';
import { PROJECT_READ_ERRORS } from './project-views.js';

/** The projects routes' descriptions, keyed by `METHOD /path` as the code declares each route. */
export const PROJECTS_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  // ---- Console: projects.
  'POST /v1/orgs/{orgId}/projects': {
    summary: 'Creates a project',
    description: 'Creates an empty chatbot or automation project, with the default API settings; save a definition and publish it before its runs can start. Caller: a member with edit access (OWNER or EDITOR).',
    tag: 'Projects',
    requestExample: REQUESTS.createProject,
    responses: { 201: { description: 'Created.', schema: 'ProjectCreated', example: ANSWERS.projectCreated }, ...consolePipeline({ level: 'edit', body: true }), ...unavailable() },
  },
  'GET /v1/orgs/{orgId}/projects': {
    summary: 'The organization’s projects',
    description: 'Every live project of the organization with its type and published version. Caller: any member.',
    tag: 'Projects',
    responses: { 200: { description: 'The projects.', schema: listOf(ref('ProjectSummary')), example: ANSWERS.projects }, ...consolePipeline(), ...unavailable() },
  },
  [`GET ${projectRoute}`]: {
    summary: 'One project',
    description: 'The project with its published and draft versions. Caller: any member.',
    tag: 'Projects',
    responses: { 200: { description: 'The project.', schema: 'Project', example: ANSWERS.project }, ...consolePipeline({ project: true }), ...unavailable() },
  },
  [`DELETE ${projectRoute}`]: {
    summary: 'Deletes the project (OWNER); its tokens and polls stop',
    description: 'Deletes the project: its API tokens are refused from then on and its polling triggers stop. Caller: an OWNER.',
    tag: 'Projects',
    responses: { 204: { description: 'Deleted.', noBody: true }, ...consolePipeline({ level: 'owner', project: true }), ...unavailable() },
  },
  [`GET ${projectRoute}/definition`]: {
    summary: 'The draft or the published definition',
    description: 'The definition of one stage (`stage=draft` or `stage=published`) with its version. Caller: any member.',
    tag: 'Projects',
    query: [{ name: 'stage', schema: { type: 'string', enum: ['draft', 'published'] }, required: true, description: 'Which definition.' }],
    responses: {
      200: { description: 'That stage (`version` and `definition` null when it has nothing yet).', schema: 'DefinitionStage', example: ANSWERS.definitionStage },
      ...withMessages(consolePipeline({ project: true }), 400, [PROJECT_READ_ERRORS.badStage]),
      ...unavailable(),
    },
  },
  [`GET ${projectRoute}/definition/versions`]: {
    summary: 'The version history of the definition',
    description: 'Every published version, newest first (at most 100): its number, who published it (the sign-in subject; null for a version published before the history was kept) and when. Publishing an unchanged draft again keeps the version’s first record. Caller: any member.',
    tag: 'Projects',
    responses: { 200: { description: 'The versions.', schema: listOf(ref('DefinitionVersionRow')), example: ANSWERS.definitionVersions }, ...consolePipeline({ project: true }), ...unavailable() },
  },
  [`GET ${projectRoute}/definition/versions/{version}`]: {
    summary: 'One published version of the definition',
    description: 'The document of a published version, e.g. the one a run used (the console’s run page draws it). Caller: any member.',
    tag: 'Projects',
    responses: {
      200: { description: 'That version.', schema: 'DefinitionVersion', example: ANSWERS.definitionVersion },
      ...withMessages(withMessages(consolePipeline({ project: true }), 400, [PROJECT_READ_ERRORS.badVersion]), 404, [PROJECT_READ_ERRORS.versionNotFound]),
      ...unavailable(),
    },
  },
  [`GET ${projectRoute}/definition/schema`]: {
    summary: 'The JSON schema of definitions',
    description: 'The JSON Schema of the definition’s structure (schema v1) the graphs the project’s type requires and allows, and the starter definition of its type (the demo’s): what the console’s editor completes and checks with, and offers a project without a definition. References between nodes and expressions are checked by the save, not by the schema. Caller: any member.',
    tag: 'Projects',
    responses: { 200: { description: 'The schema.', schema: 'DefinitionSchema', example: ANSWERS.definitionSchema }, ...consolePipeline({ project: true }), ...unavailable() },
  },
  [`PUT ${projectRoute}/definition`]: {
    summary: 'Saves the draft definition',
    description: 'Checks the definition (a chatbot’s `bot` and `flow`, an automation’s `workflow`) and saves it as the new draft; a definition with problems answers 400 with each in `details`. Publishing makes it the one runs use. Caller: a member with edit access.',
    tag: 'Projects',
    requestExample: REQUESTS.saveDefinition,
    responses: {
      200: { description: 'Saved; `draftVersion` grew by one.', schema: 'DraftSaved', example: ANSWERS.draftSaved },
      ...consolePipeline({ level: 'edit', project: true, body: true }),
      400: { ...versionError, schema: { anyOf: [ref('DefinitionError'), ref('VersionError')] }, messages: [...bodyMessages, 'the definition’s problems, summarized (`details` lists them)'] },
      ...unavailable(),
    },
  },
  [`POST ${projectRoute}/publish`]: {
    summary: 'Publishes the draft',
    description: 'Makes the draft the published definition: the runs that start from now on use it. Caller: a member with edit access.',
    tag: 'Projects',
    responses: {
      200: { description: 'Published.', schema: 'Published', example: ANSWERS.published },
      ...consolePipeline({ level: 'edit', project: true }),
      409: { description: 'There is no draft to publish.', messages: ['There is no draft definition to publish'] },
      ...unavailable(),
    },
  },
};
