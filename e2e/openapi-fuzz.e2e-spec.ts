import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService, OPENAPI_PATH } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { pollingService } from '@runline/polling-service';
import { schedulerService } from '@runline/scheduler-service';
import { webhookService } from '@runline/webhook-service';
import { consoleJwt, fuzzParameters, HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, publishDefinition, setRateLimit, VALID_AUTOMATION_DEFINITION, type ProjectFixture } from './gateway-fixtures.js';
import { hostileValue, mutationOf, valueOf, type Components } from './support/openapi-arbitraries.js';

type Schema = Record<string, unknown>;
type Operation = { parameters?: Array<{ name: string; in: string }>; requestBody?: { content: { 'application/json': { schema: Schema } } }; responses: Record<string, { content?: { 'application/json'?: { schema: Schema }; 'text/event-stream'?: unknown } }> };
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Components } };

/** 10,000 requests from a fixed seed (FUZZ_SEED, FUZZ_RUNS and FUZZ_RUNS_SCALE as for every property test: fuzzParameters). */
const FUZZ = fuzzParameters(10_000);
const RUNS = FUZZ.numRuns;

/** Everything one organization has, for the fuzz to aim at. */
interface Tenant {
  orgId: string;
  ownerJwt: string;
  chatbot: ProjectFixture;
  automation: ProjectFixture;
  chatbotToken: string;
  automationToken: string;
  ids: string[];
}

/**
 * Requests generated from the published document (DESIGN section 11), valid and invalid, on
 * every route, with the real credentials of three organizations: A (the victim: its owner only
 * reads, its VIEWER tries everything), S (a sandbox whose owner and tokens may change anything
 * of S) and B (the attacker: its owner and tokens aim at A's and S's ids as well as B's own).
 * Pass: every answer has a status the document lists for that route (so no undocumented 5xx)
 * and a body that matches the schema listed for it; B and A's VIEWER never get a 2xx for a
 * change or a read of another organization's data; A's data is the same afterwards.
 */
describe('fuzz from the published document', () => {
  let system: TestSystem;
  let http: HttpClient;
  let baseUrl: string;
  let document: Document;
  let a: Tenant;
  let s: Tenant;
  let b: Tenant;
  let viewerJwt: string;
  const validators = new Map<string, ValidateFunction>();

  beforeAll(async () => {
    // Every service that answers a public route's request, the scheduler included (a cancel or a
    // reschedule asks it): the system as it is deployed. A service that is down is the fault
    // suite's subject, not this one's.
    system = await startTestSystem([gatewayService, invocationService, schedulerService, pollingService, deadLetterService, webhookService], {
      bus: 'in-process',
      // Provider APIs a generated subscription could reach: kept on this machine, on a closed port.
      environment: { STRIPE_API_URL: 'https://127.0.0.1:9', GITHUB_API_URL: 'https://127.0.0.1:9' },
    });
    baseUrl = system.url('gateway');
    http = new HttpClient(baseUrl);
    document = (await http.get<Document>(OPENAPI_PATH)).body as unknown as Document;
    [a, s, b] = [await tenant(), await tenant(), await tenant()];
    viewerJwt = consoleJwt(`fuzz-viewer-${process.pid}`);
    expect((await http.post(`/v1/orgs/${a.orgId}/members`, { userId: `fuzz-viewer-${process.pid}`, role: 'VIEWER' }, { bearer: a.ownerJwt })).status).toBe(201);
  }, 120_000);
  afterAll(() => system?.stop());

  async function tenant(): Promise<Tenant> {
    const chatbot = await createPublishedProject(http, 'CHATBOT');
    const second = await http.post<{ projectId: string }>(`/v1/orgs/${chatbot.orgId}/projects`, { name: 'automation', type: 'AUTOMATION' }, { bearer: chatbot.ownerJwt });
    const automationHere: ProjectFixture = { orgId: chatbot.orgId, projectId: second.body.projectId, ownerJwt: chatbot.ownerJwt };
    await publishDefinition(http, automationHere, VALID_AUTOMATION_DEFINITION);
    for (const project of [chatbot, automationHere]) await setRateLimit(http, project, 1_000_000);
    const chatbotToken = await issueToken(http, chatbot, ['bot:invoke', 'flow:trigger']);
    const automationToken = await issueToken(http, automationHere, ['automation:trigger']);
    const base = `/v1/orgs/${chatbot.orgId}/projects/${chatbot.projectId}`;
    const template = await http.post<{ id: string }>(`${base}/templates`, { name: 't', endpoint: 'flows.trigger', body: { event: 'e' } }, { bearer: chatbot.ownerJwt });
    const hook = await http.post<{ id: string }>(`${base}/webhooks`, { name: 'h' }, { bearer: chatbot.ownerJwt });
    const run = await http.post<{ invocationId: string }>(`/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/trigger-async`, { event: 'e', customerId: 'c', delaySeconds: 3600 }, { bearer: chatbotToken.token });
    const ids = [chatbot.orgId, chatbot.projectId, second.body.projectId, chatbotToken.id, automationToken.id, template.body.id, hook.body.id, run.body.invocationId];
    expect(ids.every((id) => typeof id === 'string')).toBe(true);
    return { orgId: chatbot.orgId, ownerJwt: chatbot.ownerJwt, chatbot, automation: automationHere, chatbotToken: chatbotToken.token, automationToken: automationToken.token, ids };
  }

  /** A's data as its owner reads it: what nobody else may change. */
  async function snapshotOf(tenant: Tenant): Promise<unknown[]> {
    const paths = [`/v1/orgs/${tenant.orgId}/projects`, `/v1/orgs/${tenant.orgId}/plan`];
    for (const project of [tenant.chatbot, tenant.automation]) {
      const base = `/v1/orgs/${tenant.orgId}/projects/${project.projectId}`;
      paths.push(base, `${base}/api-settings`, `${base}/api-tokens`, `${base}/templates`, `${base}/webhooks`, `${base}/polling-triggers`, `${base}/definition?stage=draft`, `${base}/definition?stage=published`);
    }
    const run = tenant.ids[7]!;
    paths.push(`/v1/orgs/${tenant.orgId}/external-invocations/${run}`);
    return Promise.all(paths.map(async (path) => ({ path, ...(await http.get(path, { bearer: tenant.ownerJwt })) }))).then((answers) =>
      answers.map(({ path, status, body }) => ({ path, status, body: JSON.parse(JSON.stringify(body).replace(/"lastUsedAt":"[^"]*"/g, '"lastUsedAt":"…"')) })),
    );
  }

  function validatorFor(key: string, schema: Schema): ValidateFunction {
    let validate = validators.get(key);
    if (!validate) {
      const ajv = new Ajv2020({ strict: false, allErrors: false });
      ajv.addFormat('date-time', { validate: (value: string) => !Number.isNaN(Date.parse(value)) });
      ajv.addFormat('date', { validate: (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value) });
      // Every id of ours the document marks as a UUID must be one in the answers too.
      ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
      ajv.addFormat('url', true);
      validate = ajv.compile({ ...schema, components: document.components });
      validators.set(key, validate);
    }
    return validate;
  }

  it(`answers ${RUNS} generated requests as documented, and never across organizations`, async () => {
    const before = await snapshotOf(a);
    const routes = Object.entries(document.paths).flatMap(([path, operations]) => Object.entries(operations).map(([method, operation]) => ({ path, method, operation })));
    type Caller = { name: string; tenant: Tenant | undefined; header: Record<string, string>; mayChange: boolean };
    const callers = (): Caller[] => [
      { name: 'A owner (reads only)', tenant: a, header: { authorization: `Bearer ${a.ownerJwt}` }, mayChange: false },
      { name: 'A viewer', tenant: a, header: { authorization: `Bearer ${viewerJwt}` }, mayChange: false },
      { name: 'S owner', tenant: s, header: { authorization: `Bearer ${s.ownerJwt}` }, mayChange: true },
      { name: 'S chatbot token', tenant: s, header: { authorization: `Bearer ${s.chatbotToken}` }, mayChange: true },
      { name: 'S automation token (x-api-key)', tenant: s, header: { 'x-api-key': s.automationToken }, mayChange: true },
      { name: 'B owner', tenant: b, header: { authorization: `Bearer ${b.ownerJwt}` }, mayChange: true },
      { name: 'B chatbot token', tenant: b, header: { authorization: `Bearer ${b.chatbotToken}` }, mayChange: true },
      { name: 'B automation token', tenant: b, header: { authorization: `Bearer ${b.automationToken}` }, mayChange: true },
      { name: 'nobody', tenant: undefined, header: {}, mayChange: true },
      { name: 'garbage token', tenant: undefined, header: { authorization: 'Bearer rl_ext_not-a-real-token' }, mayChange: true },
    ];
    const request = fc.record({
      // By name, so a failure prints `PATCH /v1/…`, not the whole operation.
      route: fc.constantFrom(...routes.map((route) => `${route.method} ${route.path}`)),
      caller: fc.nat(),
      // Which organization's ids fill the path: the caller's own, another's, random or hostile.
      target: fc.constantFrom('own', 'A', 'S', 'B', 'random', 'hostile'),
      idPicks: fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
      hostileId: fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 300 }).filter((id) => id !== '.' && id !== '..'),
        // Not '.' or '..': the URL itself would lose the segment, a request to another route.
        fc.constantFrom('0', '-1', '%00', 'null', 'x'.repeat(101))),
      bodyKind: fc.constantFrom('valid', 'valid', 'mutated', 'none', 'not-json'),
      seed: fc.nat(),
    });

    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const route = routes.find((candidate) => `${candidate.method} ${candidate.path}` === input.route)!;
        const list = callers();
        let caller = list[input.caller % list.length]!;
        // A's owner only reads: what A's data must look like afterwards is what it was.
        if (caller.name.startsWith('A owner') && route.method !== 'get') caller = list[1]!;
        const targetTenant = input.target === 'own' ? (caller.tenant ?? s) : input.target === 'A' ? a : input.target === 'S' ? s : input.target === 'B' ? b : undefined;
        const pathParameters = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
        let path = route.path;
        const used: string[] = [];
        pathParameters.forEach((name, index) => {
          let value: string;
          if (input.target === 'hostile') value = input.hostileId;
          else if (!targetTenant) value = crypto.randomUUID();
          else if (name === 'orgId') value = targetTenant.orgId;
          else if (name === 'projectId') value = [targetTenant.chatbot.projectId, targetTenant.automation.projectId][input.idPicks[index]! % 2]!;
          else value = targetTenant.ids[input.idPicks[index]! % targetTenant.ids.length]!;
          used.push(value);
          path = path.replace(`{${name}}`, encodeURIComponent(value));
        });
        // Keep the sandbox usable: its projects and tokens are not deleted or revoked by the fuzz.
        if (route.method === 'delete' && (route.path.endsWith('{projectId}') || route.path.endsWith('{tokenId}')) && targetTenant === s) return;

        const schema = route.operation.requestBody?.content['application/json'].schema;
        const sample = (arbitrary: fc.Arbitrary<unknown>) => fc.sample(arbitrary, { numRuns: 1, seed: input.seed })[0];
        let body: string | undefined;
        // fetch sends no body with GET (nor does any client the document is for).
        if (route.method === 'get') body = undefined;
        else if (input.bodyKind === 'not-json') body = '{"unfinished": ';
        else if (input.bodyKind !== 'none' && (schema || route.method !== 'get')) {
          body = JSON.stringify(sample(input.bodyKind === 'valid' && schema ? valueOf(schema, document.components.schemas) : schema ? mutationOf(schema, document.components.schemas) : hostileValue) ?? null);
        }
        const query = route.path.endsWith('/definition') && route.method === 'get' ? `?stage=${input.seed % 3 === 0 ? 'nope' : 'draft'}` : '';
        const headers: Record<string, string> = { ...caller.header, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) };
        const response = await fetch(`${baseUrl}${path}${query}`, { method: route.method.toUpperCase(), headers, body });
        // A stream of a run in progress or of a project's runs does not end: its first event is its answer.
        const streaming = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
        const text = streaming ? await firstEventOf(response) : await response.text();
        const what = `${route.method.toUpperCase()} ${path.slice(0, 200)}${query} as ${caller.name} (body ${body?.slice(0, 200)}) → ${response.status} ${text.slice(0, 300)}`;

        const documented = route.operation.responses[String(response.status)];
        if (!documented) throw new Error(`undocumented status: ${what}`);
        const answerSchema = documented.content?.['application/json']?.schema;
        if (streaming) {
          if (!documented.content?.['text/event-stream']) throw new Error(`an event stream where none is documented: ${what}`);
          if (!/^(:|id:|event:|data:|retry:)/.test(text)) throw new Error(`not an event stream: ${what}`);
        } else if (answerSchema) {
          const validate = validatorFor(`${route.method} ${route.path} ${response.status}`, answerSchema);
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            throw new Error(`not JSON: ${what}`);
          }
          if (!validate(parsed)) throw new Error(`answer does not match its schema (${JSON.stringify(validate.errors?.[0])}): ${what}`);
        } else if (text !== '') {
          throw new Error(`a body where none is documented: ${what}`);
        }

        // Isolation: B's credentials on A's or S's ids, and A's VIEWER changing anything of A, never succeed.
        const foreign = caller.tenant === b && used.some((id) => a.ids.includes(id) || s.ids.includes(id));
        const viewerChange = caller.name === 'A viewer' && route.method !== 'get' && used.length > 0;
        if ((foreign || viewerChange) && response.status >= 200 && response.status < 300) throw new Error(`crossed organizations: ${what}`);
      }),
      { ...FUZZ, verbose: 1, endOnFailure: true },
    );

    expect(await snapshotOf(a)).toEqual(before);
  }, 900_000);
});

/** The first event (or comment) of an event stream, then the stream is closed: a live stream never ends by itself. */
async function firstEventOf(response: Response): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + 20_000;
  try {
    while (!text.includes('\n\n') && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return text;
}
