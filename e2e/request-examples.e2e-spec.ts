import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { consoleJwt, HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createProject, createPublishedProject, issueToken, publishDefinition, VALID_AUTOMATION_DEFINITION, type ProjectFixture } from './gateway-fixtures.js';
import { invocationPath, UUID_PATTERN, type Json } from './support/runs-support.js';

const run = promisify(execFile);

const ENDPOINTS_MESSAGE =
  'endpoint must be one of: bots.message, bots.invoke, flows.trigger, flows.trigger-async, automations.trigger, automations.trigger-async';

/** Bodies that break naive quoting: double and single quotes, unicode, shell characters, a newline. */
const CHATBOT_TEMPLATE_BODY = {
  event: `order "quoted" it's`,
  customerId: `cüst☕-'1'`,
  note: 'line\nbreak $HOME `id` $(id) \\ 𝄞 日本語',
};
const AUTOMATION_TEMPLATE_BODY = { event: `it's "on"`, payload: { orderId: `O'Brien "42" ☕`, amount: 12.5 } };

interface Example {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Json;
  snippets: { curl: string; javascript: string; python: string };
}

/** GET …/request-example: the request example builder, and its snippets run for real. */
describe('request examples', () => {
  let system: TestSystem;
  let http: HttpClient;
  let chatbot: ProjectFixture;
  let automation: ProjectFixture;
  let chatbotToken: string;
  let automationToken: string;
  let workdir: string;
  let pythonRequests: boolean;
  const viewer = consoleJwt('examples-viewer');
  const examplePath = (project: ProjectFixture, query: string) => `/v1/orgs/${project.orgId}/projects/${project.projectId}/request-example?${query}`;
  const example = (project: ProjectFixture, query: string) => http.get<Example>(examplePath(project, query), { bearer: viewer });

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService]);
    http = new HttpClient(system.url('gateway'));
    chatbot = await createPublishedProject(http, 'CHATBOT');
    const created = await http.post<{ projectId: string }>(`/v1/orgs/${chatbot.orgId}/projects`, { name: 'Automation', type: 'AUTOMATION' }, { bearer: chatbot.ownerJwt });
    automation = { ...chatbot, projectId: created.body.projectId };
    await publishDefinition(http, automation, VALID_AUTOMATION_DEFINITION);
    expect((await http.post(`/v1/orgs/${chatbot.orgId}/members`, { userId: 'examples-viewer', role: 'VIEWER' }, { bearer: chatbot.ownerJwt })).status).toBe(201);
    chatbotToken = (await issueToken(http, chatbot, ['flow:trigger', 'bot:invoke'])).token;
    automationToken = (await issueToken(http, automation, ['automation:trigger'])).token;
    workdir = await mkdtemp(path.join(tmpdir(), 'runline-snippets-'));
    pythonRequests = await run('python3', ['-c', 'import requests']).then(
      () => true,
      () => false,
    );
    // CI installs python3-requests (.ci/run), so there a missing module is a failure, not a skip.
    if (!pythonRequests && process.env.CI) throw new Error('request examples: python3 with the requests module is missing (CI must run the Python snippets)');
    if (!pythonRequests) console.log('request examples: the Python snippets are NOT run here: python3 or its requests module is missing');
  });
  afterAll(async () => {
    await system?.stop();
    if (workdir) await rm(workdir, { recursive: true, force: true });
  });

  async function template(project: ProjectFixture, endpoint: string, body: Json): Promise<string> {
    const saved = await http.post<{ id: string }>(`/v1/orgs/${project.orgId}/projects/${project.projectId}/templates`, { name: endpoint, endpoint, body }, { bearer: project.ownerJwt });
    expect(saved.status).toBe(201);
    return saved.body.id;
  }

  /** Runs a snippet as a person would paste it, with RUNLINE_TOKEN set; returns the JSON answer it printed. */
  async function runSnippet(language: keyof Example['snippets'], code: string, token: string): Promise<Json> {
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', RUNLINE_TOKEN: token };
    let output: string;
    if (language === 'curl') {
      output = (await run('bash', ['-c', code], { env })).stdout;
    } else {
      const file = path.join(workdir, `${Math.random().toString(36).slice(2)}.${language === 'javascript' ? 'mjs' : 'py'}`);
      await writeFile(file, code);
      output = (await run(language === 'javascript' ? process.execPath : 'python3', [file], { env })).stdout;
    }
    // curl prints the answer; the others print "<status> <answer>".
    const status = language === 'curl' ? null : Number(output.slice(0, output.indexOf(' ')));
    if (status !== null) expect({ language, status, ok: status >= 200 && status < 300 }).toEqual({ language, status, ok: true });
    return JSON.parse(output.slice(output.indexOf('{'))) as Json;
  }

  /** Every snippet of the example starts its own run, with the example's body as the run's requestPayload. */
  async function runsEverySnippet(built: Example, token: string, project: ProjectFixture): Promise<void> {
    const languages = (['curl', 'javascript', 'python'] as const).filter((language) => language !== 'python' || pythonRequests);
    const ids = new Set<string>();
    for (const language of languages) {
      const answer = await runSnippet(language, built.snippets[language], token);
      expect({ language, answer }).toEqual({ language, answer: expect.objectContaining({ invocationId: expect.stringMatching(UUID_PATTERN), status: expect.any(String) }) });
      const id = answer.invocationId as string;
      ids.add(id);
      const stored = await http.get<Json>(invocationPath(project.orgId, id), { bearer: token });
      expect(stored.status).toBe(200);
      expect(stored.body.requestPayload).toEqual(built.body);
    }
    // A new idempotency key per run: never the replay of an earlier snippet's run.
    expect(ids.size).toBe(languages.length);
  }

  it('without a template: the keys the chatbot flow trigger checks, the URL for this org and project, a placeholder token', async () => {
    const built = await example(chatbot, 'endpoint=flows.trigger');
    expect(built.status).toBe(200);
    expect(built.body).toEqual({
      method: 'POST',
      url: `${system.url('gateway')}/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/trigger`,
      headers: { Authorization: 'Bearer $RUNLINE_TOKEN', 'Content-Type': 'application/json', 'x-idempotency-key': expect.stringMatching(UUID_PATTERN) },
      body: { triggerKey: 'external_event', event: 'example_event', customerId: 'customer-123' },
      snippets: { curl: expect.any(String), javascript: expect.any(String), python: expect.any(String) },
    });
    expect(JSON.stringify(built.body)).not.toContain(chatbotToken);
    expect(JSON.stringify(built.body)).not.toMatch(/rl_ext_/);
    await runsEverySnippet(built.body, chatbotToken, chatbot);
  });

  it('without a template: an automation gets event and a payload with the expectedPayload keys', async () => {
    const built = await example(automation, 'endpoint=automations.trigger-async');
    expect(built.status).toBe(200);
    expect(built.body.url).toBe(`${system.url('gateway')}/v1/orgs/${automation.orgId}/automations/${automation.projectId}/trigger-async`);
    expect(built.body.body).toEqual({ triggerKey: 'external_event', event: 'example_event', payload: { orderId: '', amount: 0 } });
    await runsEverySnippet(built.body, automationToken, automation);
  });

  it('with a template holding quotes, unicode and an apostrophe: a chatbot async trigger', async () => {
    const templateId = await template(chatbot, 'flows.trigger-async', CHATBOT_TEMPLATE_BODY);
    const built = await example(chatbot, `templateId=${templateId}`);
    expect(built.status).toBe(200);
    expect(built.body.url).toBe(`${system.url('gateway')}/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/trigger-async`);
    expect(built.body.body).toEqual(CHATBOT_TEMPLATE_BODY);
    expect((await example(chatbot, `endpoint=flows.trigger-async&templateId=${templateId}`)).body.body).toEqual(CHATBOT_TEMPLATE_BODY);
    await runsEverySnippet(built.body, chatbotToken, chatbot);
  });

  it('with a template holding quotes, unicode and an apostrophe: an automation sync trigger', async () => {
    const templateId = await template(automation, 'automations.trigger', AUTOMATION_TEMPLATE_BODY);
    const built = await example(automation, `endpoint=automations.trigger&templateId=${templateId}`);
    expect(built.status).toBe(200);
    expect(built.body.body).toEqual(AUTOMATION_TEMPLATE_BODY);
    await runsEverySnippet(built.body, automationToken, automation);
  });

  it('bot endpoints: the message fields of the spec', async () => {
    const message = await example(chatbot, 'endpoint=bots.message');
    expect(message.body.body).toEqual({ message: 'Hello', sessionId: 'session-123', userId: 'user-123', userName: 'Ada', platform: 'web' });
    expect(message.body.url).toBe(`${system.url('gateway')}/v1/orgs/${chatbot.orgId}/bots/${chatbot.projectId}/message`);
    const invoke = await example(chatbot, 'endpoint=bots.invoke');
    expect(invoke.body.body).toEqual({ message: 'Hello', sessionId: 'session-123', userName: 'Ada' });
    const answer = await runSnippet('curl', message.body.snippets.curl, chatbotToken);
    expect(answer).toMatchObject({ invocationId: expect.stringMatching(UUID_PATTERN), status: 'SUCCEEDED', result: { messages: ['Hi Ada'] } });
  });

  it("the trigger's own key and expected keys; the draft's when nothing is published yet", async () => {
    const fresh = await createProject(http, 'AUTOMATION');
    const definition = {
      schemaVersion: 1,
      workflow: { trigger: { key: 'order_paid', expectedPayload: { orderId: 'A-1', lines: [] } }, start: 'n1', nodes: { n1: { type: 'return', value: 'payload' } } },
    };
    const saved = await http.put(`/v1/orgs/${fresh.orgId}/projects/${fresh.projectId}/definition`, { definition }, { bearer: fresh.ownerJwt });
    expect(saved.status).toBe(200);
    const built = await http.get<Example>(examplePath(fresh, 'endpoint=automations.trigger'), { bearer: fresh.ownerJwt });
    expect(built.body.body).toEqual({ triggerKey: 'order_paid', event: 'example_event', payload: { orderId: 'A-1', lines: [] } });
    const empty = await createProject(http, 'CHATBOT');
    const defaults = await http.get<Example>(examplePath(empty, 'endpoint=flows.trigger'), { bearer: empty.ownerJwt });
    expect(defaults.body.body).toEqual({ triggerKey: 'external_event', event: 'example_event', customerId: 'customer-123' });
  });

  it('400 for a missing or unknown endpoint, an endpoint of the other project type, or one that is not the template’s', async () => {
    expect(await example(chatbot, '')).toMatchObject({ status: 400, body: { error: 'endpoint is required (or a templateId, whose endpoint is then used)' } });
    for (const query of ['endpoint=flows.poll', 'endpoint=', 'endpoint=flows.trigger&endpoint=bots.message']) {
      expect(await example(chatbot, query)).toMatchObject({ status: 400, body: { error: ENDPOINTS_MESSAGE } });
    }
    expect(await example(chatbot, 'endpoint=automations.trigger')).toMatchObject({
      status: 400,
      body: { error: 'endpoint automations.trigger is not available for CHATBOT projects; use one of: bots.message, bots.invoke, flows.trigger, flows.trigger-async' },
    });
    expect(await example(automation, 'endpoint=bots.message')).toMatchObject({
      status: 400,
      body: { error: 'endpoint bots.message is not available for AUTOMATION projects; use one of: automations.trigger, automations.trigger-async' },
    });
    const templateId = await template(chatbot, 'flows.trigger', { event: 'e', customerId: 'c' });
    expect(await example(chatbot, `endpoint=flows.trigger-async&templateId=${templateId}`)).toMatchObject({
      status: 400,
      body: { error: "endpoint flows.trigger-async does not match the template's endpoint (flows.trigger)" },
    });
  });

  it('404 Template not found for an unknown templateId, a malformed one, or another project’s', async () => {
    const foreign = await template(automation, 'automations.trigger', { event: 'e', payload: {} });
    for (const templateId of ['00000000-0000-4000-8000-000000000000', 'nope', foreign]) {
      expect(await example(chatbot, `endpoint=flows.trigger&templateId=${templateId}`)).toMatchObject({ status: 404, body: { error: 'Template not found' } });
    }
  });

  it('any member reads it; 404 for a non-member and another organization’s project; 401 without a JWT or with an API token', async () => {
    const query = 'endpoint=flows.trigger';
    expect((await example(chatbot, query)).status).toBe(200);
    expect(await http.get(examplePath(chatbot, query), { bearer: consoleJwt('examples-stranger') })).toMatchObject({ status: 404, body: { error: 'Organization not found' } });
    const other = await createProject(http, 'CHATBOT');
    expect(await http.get(examplePath({ ...other, orgId: chatbot.orgId }, query), { bearer: chatbot.ownerJwt })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
    expect(await http.get(examplePath(chatbot, query))).toMatchObject({ status: 401, body: { error: 'Missing console token' } });
    expect(await http.get(examplePath(chatbot, query), { bearer: chatbotToken })).toMatchObject({ status: 401, body: { error: 'Invalid or expired console token' } });
  });
});

/** PUBLIC_API_URL sets the address in the examples (behind a proxy the request's own address is wrong). */
describe('request examples behind a proxy', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await startTestSystem([gatewayService], { environment: { PUBLIC_API_URL: 'https://api.example.com:8443/' } });
  });
  afterAll(() => system?.stop());

  it('uses PUBLIC_API_URL, without a doubled slash', async () => {
    const http = new HttpClient(system.url('gateway'));
    const project = await createProject(http, 'AUTOMATION');
    const built = await http.get<Example>(`/v1/orgs/${project.orgId}/projects/${project.projectId}/request-example?endpoint=automations.trigger`, { bearer: project.ownerJwt });
    expect(built.status).toBe(200);
    expect(built.body.url).toBe(`https://api.example.com:8443/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger`);
    expect(built.body.snippets.curl).toContain(`'https://api.example.com:8443/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger'`);
  });
});
