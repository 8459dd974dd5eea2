import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { BaseResolver, createConfig, lintDocument, makeDocumentFromString } from '@redocly/openapi-core';
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

/** `@All` routes are documented with these methods; Fastify registers every method it knows for them. */
const DOCUMENTED_FOR_ALL = ['DELETE', 'GET', 'PATCH', 'POST', 'PUT'];

type Document = { openapi: string; paths: Record<string, Record<string, unknown>> };

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

  it("passes Redocly's recommended rules with no error", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintDocument({ document: makeDocumentFromString(served, 'openapi.json'), config: config.styleguide, externalRefResolver: new BaseResolver() });
    const errors = problems.filter((problem) => problem.severity === 'error').map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`);
    expect(errors).toEqual([]);
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
      const takesAll = methods.size > DOCUMENTED_FOR_ALL.length + 1;
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
