import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createRunlineClient } from '@runline/api-client';
import { gatewayService, OPENAPI_PATH, registeredRoutes } from '@runline/gateway-service';
import { consoleJwt, startTestSystem, type TestSystem } from '@runline/testing';

/**
 * Routes the document leaves out on purpose, and only these: the operational endpoints every
 * service has (never part of the public API, never exposed by the ingress) and the document itself.
 */
const NOT_DOCUMENTED = new Set(['GET /health/live', 'GET /health/ready', 'GET /metrics', `GET ${OPENAPI_PATH}`]);

/** The web console's own pages and sign-in routes are a browser's, not the API's. */
const CONSOLE_ROUTES = /^(GET|HEAD) \/console\//;

/**
 * An `@All` route (the inbound hook) is published as POST, the one method it accepts; Fastify
 * registers every method it knows for it, and the others answer 405 (inbound-hooks.e2e-spec.ts),
 * which the POST operation's description says.
 */
const DOCUMENTED_FOR_ALL = ['POST'];
/** More methods than explicit routes can give one path (GET, HEAD, POST, PUT, PATCH, DELETE): an `@All` route. */
const MOST_EXPLICIT_METHODS = 6;

const REPO_ROOT = path.resolve(import.meta.dirname, '..');

/** Fields named like ids that are not ids of ours (so not UUIDs): the caller's, a user's sign-in subject, a provider's. */
const NOT_OUR_IDS = new Set(['customerId', 'sessionId', 'userId', 'providerId']);
/** Ids that hold a name the caller chose: a schedule's comes from its definition (`[a-z0-9-]{1,64}`). */
const NOT_OUR_ID_FIELDS = new Set(['Schedule.id', 'InvocationMetrics.schedules.id']);
const notOurIdPath = (route: string) => route.includes('/schedules/{id}');

type Schema = Record<string, unknown>;
type MediaType = { schema: Schema; example?: unknown };
type Operation = {
  description?: string;
  parameters: Array<{ name: string; in: string; schema: Schema }>;
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { content?: Record<string, MediaType> }>;
};
type Document = { openapi: string; tags: Array<{ name: string; description?: string }>; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

/** The published API description: served, valid, linted, and complete (DESIGN section 11). */
describe('the published OpenAPI document', () => {
  let system: TestSystem;
  let baseUrl: string;
  let served: string;

  beforeAll(async () => {
    system = await startTestSystem([gatewayService]);
    baseUrl = system.url('gateway');
    const response = await fetch(`${baseUrl}${OPENAPI_PATH}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    served = await response.text();
  });
  afterAll(() => system?.stop());

  it('is served at GET /v1/openapi.json without a credential, as OpenAPI 3.1, and is the committed libs/api-client/openapi.json', () => {
    const document = JSON.parse(served) as Document;
    expect(document.openapi).toBe('3.1.0');
    const committed = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../libs/api-client/openapi.json'), 'utf8')) as unknown;
    expect(document).toEqual(committed);
  });

  it("passes Redocly's recommended rules with no error and no warning (redocly lint with the repository's redocly.yaml)", async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'runline-openapi-lint-'));
    try {
      const file = path.join(directory, 'openapi.json');
      await writeFile(file, served);
      const cli = path.join(REPO_ROOT, 'node_modules/@redocly/cli/bin/cli.js');
      // recommended-strict: `recommended` with its warnings raised to errors, so any problem fails.
      const lint = await promisify(execFile)(process.execPath, [cli, 'lint', file, '--config', path.join(REPO_ROOT, 'redocly.yaml'), '--format', 'json'], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 64 * 1024 * 1024,
      }).catch((error: { stdout?: string; message: string }) => ({ stdout: error.stdout ?? error.message }));
      const report = JSON.parse(lint.stdout) as { totals: Record<string, number>; problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }> };
      expect(report.problems.map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`)).toEqual([]);
      expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('describes every tag and operation, and gives every id of ours format uuid (path, query, body and answer fields)', () => {
    const document = JSON.parse(served) as Document;
    const operations = Object.entries(document.paths).flatMap(([route, methods]) => Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${route}`, operation })));
    expect(document.tags.filter((tag) => !tag.description).map((tag) => tag.name)).toEqual([]);
    expect(operations.filter(({ operation }) => !operation.description?.trim()).map(({ key }) => key)).toEqual([]);

    const notUuid: string[] = [];
    const isId = (name: string) => (name === 'id' || name.endsWith('Id')) && !NOT_OUR_IDS.has(name);
    for (const { key, operation } of operations) {
      for (const parameter of operation.parameters) {
        if (isId(parameter.name) && parameter.schema.format !== 'uuid' && !(parameter.name === 'id' && notOurIdPath(key))) notUuid.push(`${key} ${parameter.in} ${parameter.name}`);
      }
    }
    const visit = (schema: unknown, where: string): void => {
      if (!schema || typeof schema !== 'object') return;
      const node = schema as Schema;
      for (const [name, property] of Object.entries((node.properties ?? {}) as Record<string, Schema>)) {
        if (isId(name) && property.format !== 'uuid' && !NOT_OUR_ID_FIELDS.has(`${where}.${name}`)) notUuid.push(`${where}.${name}`);
        visit(property, `${where}.${name}`);
      }
      for (const keyword of ['items', 'additionalProperties']) visit(node[keyword], where);
      for (const keyword of ['anyOf', 'oneOf', 'allOf']) for (const option of (node[keyword] ?? []) as unknown[]) visit(option, where);
    };
    for (const [name, schema] of Object.entries(document.components.schemas)) visit(schema, name);
    for (const { key, operation } of operations) {
      visit(operation.requestBody?.content['application/json']?.schema, `${key} body`);
      for (const [status, answer] of Object.entries(operation.responses)) visit(answer.content?.['application/json']?.schema, `${key} ${status}`);
    }
    expect(notUuid).toEqual([]);
  });

  it('has an example for every request body and every success answer, each valid against its schema (ajv) and naming no undocumented field', () => {
    const document = JSON.parse(served) as Document;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
    ajv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/);
    ajv.addFormat('date-time', { validate: (value: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) && !Number.isNaN(Date.parse(value)) });
    ajv.addFormat('url', { validate: (value: string) => URL.canParse(value) });
    const resolve = (schema: Schema): Schema =>
      typeof schema.$ref === 'string' ? resolve(document.components.schemas[schema.$ref.split('/').pop()!]!) : schema;
    /** Redocly's rule too: a field the schema does not name (where it does not say more are allowed) is a drift. */
    const undocumented = (value: unknown, schema: Schema, at: string): string[] => {
      const node = resolve(schema);
      if (Array.isArray(value)) return node.items ? value.flatMap((item, index) => undocumented(item, node.items as Schema, `${at}[${index}]`)) : [];
      if (!value || typeof value !== 'object' || !node.properties) return [];
      const properties = node.properties as Record<string, Schema>;
      return Object.entries(value).flatMap(([name, field]) =>
        name in properties ? undocumented(field, properties[name]!, `${at}.${name}`) : node.additionalProperties === undefined || node.additionalProperties === false ? [`${at}.${name}`] : [],
      );
    };

    const problems: string[] = [];
    let checked = 0;
    const check = (where: string, media: MediaType | undefined) => {
      if (!media) return;
      if (media.example === undefined) {
        problems.push(`${where}: no example`);
        return;
      }
      checked++;
      const validate = ajv.compile({ ...media.schema, components: document.components });
      if (!validate(media.example)) problems.push(`${where}: ${ajv.errorsText(validate.errors)}`);
      for (const field of undocumented(media.example, media.schema, 'example')) problems.push(`${where}: ${field} is not in the schema`);
    };
    for (const [route, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const key = `${method.toUpperCase()} ${route}`;
        check(`${key} request body`, operation.requestBody?.content['application/json']);
        for (const [status, answer] of Object.entries(operation.responses)) if (Number(status) < 300) check(`${key} ${status}`, answer.content?.['application/json']);
      }
    }
    expect(problems).toEqual([]);
    // Not a vacuous pass: every body route and every answer with a body.
    expect(checked).toBeGreaterThan(70);
  });

  it('documents every route the gateway registered, and nothing it did not (health, metrics and the document itself excepted)', () => {
    const fastify = (system.services.get('gateway')!.app as NestFastifyApplication).getHttpAdapter().getInstance();
    const registered = new Set<string>();
    const byPath = new Map<string, Set<string>>();
    for (const route of registeredRoutes(fastify)) {
      const url = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      if (!byPath.has(url)) byPath.set(url, new Set());
      byPath.get(url)!.add(route.method);
      registered.add(`${route.method} ${url}`);
    }
    const expected = new Set<string>();
    for (const [route, methods] of byPath) {
      // Fastify adds a HEAD route for each GET route itself; an @All route gets every method Fastify knows.
      const takesAll = methods.size > MOST_EXPLICIT_METHODS;
      for (const method of takesAll ? DOCUMENTED_FOR_ALL : [...methods].filter((method) => method !== 'HEAD' || !methods.has('GET'))) {
        const key = `${method} ${route}`;
        if (!NOT_DOCUMENTED.has(key) && !CONSOLE_ROUTES.test(key)) expected.add(key);
      }
    }
    for (const excluded of NOT_DOCUMENTED) expect(registered).toContain(excluded);

    const document = JSON.parse(served) as Document;
    const documented = new Set(Object.entries(document.paths).flatMap(([route, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${route}`)));
    expect({ missingFromTheDocument: [...expected].filter((key) => !documented.has(key)).sort(), notRegistered: [...documented].filter((key) => !expected.has(key)).sort() }).toEqual({
      missingFromTheDocument: [],
      notRegistered: [],
    });
    // Not a vacuous pass: the gateway has routes of every kind.
    expect(expected.size).toBeGreaterThan(50);
  });

  it('is what the typed client speaks: a console call through @runline/api-client gets typed data and typed refusals', async () => {
    const owner = createRunlineClient(baseUrl, consoleJwt('openapi-owner'));
    const created = await owner.POST('/v1/orgs', { body: { name: 'Published API' } });
    expect(created.response.status).toBe(201);
    expect(created.data).toEqual({ orgId: expect.any(String), name: 'Published API' });
    const listed = await owner.GET('/v1/orgs');
    expect(listed.data?.data).toEqual([{ orgId: created.data!.orgId, name: 'Published API', role: 'OWNER' }]);

    const stranger = createRunlineClient(baseUrl, consoleJwt('openapi-stranger'));
    const refused = await stranger.GET('/v1/orgs/{orgId}/projects', { params: { path: { orgId: created.data!.orgId } } });
    expect(refused.response.status).toBe(404);
    expect(refused.error).toEqual({ error: 'Organization not found' });
    const anonymous = await createRunlineClient(baseUrl).GET('/v1/orgs');
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.error).toEqual({ error: 'Missing console token' });
  });

  it('refuses null for an API setting that has no "unset" with 400 and the rule, where it answered 500 (found by the fuzz)', async () => {
    const owner = createRunlineClient(baseUrl, consoleJwt('openapi-settings'));
    const org = await owner.POST('/v1/orgs', { body: { name: 'Settings' } });
    const project = await owner.POST('/v1/orgs/{orgId}/projects', { params: { path: { orgId: org.data!.orgId } }, body: { name: 'p', type: 'CHATBOT' } });
    const path = { orgId: org.data!.orgId, projectId: project.data!.projectId };
    for (const [field, message] of [
      ['externalApiEnabled', 'externalApiEnabled must be a boolean value'],
      ['defaultEnrollmentPolicy', 'defaultEnrollmentPolicy must be one of the following values: ONE_TIME, EVERY_MATCH'],
      ['defaultOnErrorPolicy', 'defaultOnErrorPolicy must be one of the following values: ABORT, CONTINUE'],
    ] as const) {
      // The document says null is not allowed here; the cast sends it anyway, as a careless client would.
      const answer = await owner.PATCH('/v1/orgs/{orgId}/projects/{projectId}/api-settings', { params: { path }, body: { [field]: null } as never });
      expect({ status: answer.response.status, error: answer.error }).toEqual({ status: 400, error: { error: message } });
    }
    const unchanged = await owner.GET('/v1/orgs/{orgId}/projects/{projectId}/api-settings', { params: { path } });
    expect(unchanged.data).toMatchObject({ externalApiEnabled: true, defaultEnrollmentPolicy: 'ONE_TIME', defaultOnErrorPolicy: 'ABORT' });
  });
});
