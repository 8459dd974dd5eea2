/**
 * The published document's examples: one for every request body and every success answer
 * (the document's build refuses an operation without one). They tell one story, a demo shop
 * whose chatbot and automation projects receive orders, with the same ids throughout, in the
 * shapes the gateway really sends (taken from a running system). The OpenAPI e2e test validates
 * each against its schema, and Redocly's lint does too, so they cannot drift from the schemas;
 * the fuzz test holds the schemas to what the gateway answers.
 */
type Example = Record<string, unknown>;

export const IDS = {
  org: '6f1c2a7e-3b4d-4e8f-9a0b-1c2d3e4f5a6b',
  chatbot: '0b8e5c3a-7d2f-4a1e-9c6b-5d4e3f2a1b0c',
  automation: '9d7c6b5a-4e3f-4a2b-8c1d-0e9f8a7b6c5d',
  syncRun: '3a9f1e52-6c7d-4b8e-a1f2-0c3d4e5f6a7b',
  asyncRun: '7c2e9b14-5a3d-4f6e-8b1c-2d3e4f5a6b7c',
  scheduledRun: 'c41d8e27-9b6a-4c3f-a2e1-5f4d3c2b1a09',
  botRun: 'e5b3a1c9-2d4f-4e6a-b8c7-9a0b1c2d3e4f',
  hookRun: '2f6a8c0e-1b3d-4f5a-9c7e-6d8b0a2c4e6f',
  token: '1ed82aca-6fbb-46d5-971c-a70ba69c45fb',
  pollingTrigger: 'f831cc5b-fab9-4c2d-abf6-03414b1afa13',
  deadLetter: 'd052816c-4bd6-4cac-8390-94d365b9eea0',
  template: '1fe6f65f-1959-41bf-9ccc-54ffbbc10e5b',
  hook: '7a0a7197-dfb0-4dc5-9fbb-87497208163f',
  subscription: 'd0a4e818-8ed7-402a-8048-c0affe3dc2c0',
} as const;

const gateway = 'https://runline.example.com';
const orgPath = `${gateway}/v1/orgs/${IDS.org}`;

// ---- Request bodies.

export const REQUESTS = {
  botMessage: { message: 'Where is my order 42?', sessionId: 'chat-7f3a', userId: 'c-1042', userName: 'Ada', platform: 'web' },
  botInvoke: { message: 'Where is my order 42?', userName: 'Ada', webhookUrl: 'https://shop.example.com/runline/callback', webhookSecret: 'cb-secret-2f9e71' },
  flowTrigger: { event: 'order.created', customerId: 'c-1042', orderId: '42' },
  flowTriggerAsync: {
    event: 'order.created',
    customerId: 'c-1042',
    orderId: '42',
    delaySeconds: 3600,
    webhookUrl: 'https://shop.example.com/runline/callback',
    webhookSecret: 'cb-secret-2f9e71',
  },
  automationTrigger: { event: 'order.paid', payload: { orderId: '42', amount: 10 }, triggerKey: 'external_event' },
  automationTriggerAsync: { event: 'order.paid', payload: { orderId: '42', amount: 10 }, runAt: '2026-03-03T09:00:00Z', onErrorPolicy: 'CONTINUE' },
  modifyInvocation: { action: 'reschedule', delaySeconds: 7200 },
  registerPolling: { source: 'crm', pollKey: 'new-orders', pollEndpoint: 'https://crm.example.com/api/orders?status=new', authHeader: 'Bearer crm-api-key', intervalMs: 60000 },
  hookDelivery: { event: 'order.created', customerId: 'c-1042', orderId: '42' },
  createOrganization: { name: 'Acme Shop' },
  setPlan: { monthlyQuota: 10000, rateLimitPerMinute: 120, rateLimitWindowMs: 60000, renewalDay: 1 },
  addMember: { userId: 'auth0|ada', role: 'EDITOR' },
  createProject: { name: 'Order updates', type: 'CHATBOT' },
  saveDefinition: {
    definition: {
      schemaVersion: 1,
      bot: { start: 'hello', nodes: { hello: { type: 'message', text: 'Hi {{ input.userName }}', next: 'end' }, end: { type: 'end' } } },
      flow: {
        trigger: { externalEnabled: true, key: 'external_event' },
        start: 'n1',
        nodes: { n1: { type: 'message', text: 'Order {{ payload.orderId }} is on its way', next: 'n2' }, n2: { type: 'end' } },
      },
    },
  },
  updateApiSettings: { defaultCallbackUrl: 'https://shop.example.com/runline/callback', defaultCallbackSecret: 'cb-secret-2f9e71', rateLimitPerMinute: 300 },
  createApiToken: { name: 'CRM sync', scopes: ['flow:trigger'], expiresAt: '2027-12-31' },
  bulkReplay: { filter: { source: 'crm', from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' }, dryRun: false },
  scheduleBackfill: { from: '2026-02-23T00:00:00Z', to: '2026-02-28T00:00:00Z' },
  template: { name: 'New order', endpoint: 'flows.trigger', body: { event: 'order.created', customerId: 'c-1042', orderId: '42' } },
  createWebhook: { name: 'Shop orders', rateLimitPerMinute: 600 },
  createWebhookSubscription: { provider: 'github', events: 'push,pull_request', credentials: { token: 'ghp_exampleTokenValue', repository: 'acme/shop', webhookSecret: 'gh-hook-secret-91c2' } },
} satisfies Record<string, Example>;

// ---- Success answers.

const invocation = {
  invocationId: IDS.syncRun,
  status: 'SUCCEEDED',
  environment: 'PRODUCTION',
  triggerSource: 'WEBHOOK',
  mode: 'SYNC',
  targetType: 'AUTOMATION',
  startedAt: '2026-03-02T09:15:04.211Z',
  completedAt: '2026-03-02T09:15:04.236Z',
  durationMs: 25,
  errorMessage: null,
  requestPayload: { event: 'order.paid', payload: { amount: 10, orderId: '42' } },
  result: { ok: true, orderId: '42' },
  trace: { graph: 'workflow', steps: 1, runtime: 'runline-engine/1', startedAt: '2026-03-02T09:15:04.214Z', durationMs: 1, completedAt: '2026-03-02T09:15:04.215Z' },
  steps: [{ type: 'return', nodeId: 'n1', status: 'SUCCEEDED', startedAt: '2026-03-02T09:15:04.214Z', durationMs: 1, completedAt: '2026-03-02T09:15:04.215Z' }],
  callbackAttempts: [],
  scheduledFor: null,
  schedulerStatus: null,
  schedulerJobName: null,
  pendingApproval: null,
  createdAt: '2026-03-02T09:15:04.211Z',
  updatedAt: '2026-03-02T09:15:04.236Z',
  attempts: 1,
  maxAttempts: 1,
  onErrorPolicy: 'ABORT',
  enrollmentPolicy: 'EVERY_MATCH',
};

const rescheduled = {
  ...invocation,
  invocationId: IDS.scheduledRun,
  status: 'SCHEDULED',
  triggerSource: 'SCHEDULE',
  mode: 'ASYNC',
  startedAt: null,
  completedAt: null,
  durationMs: null,
  requestPayload: { event: 'order.paid', runAt: '2026-03-03T09:00:00Z', payload: { amount: 10, orderId: '42' } },
  result: null,
  trace: null,
  steps: [],
  scheduledFor: '2026-03-02T11:15:05.000Z',
  schedulerStatus: 'SCHEDULED',
  schedulerJobName: `run-${IDS.scheduledRun}`,
  updatedAt: '2026-03-02T09:15:05.002Z',
  attempts: 0,
  maxAttempts: 3,
};

const pollingTrigger = {
  id: IDS.pollingTrigger,
  source: 'crm',
  pollKey: 'new-orders',
  dedupeField: 'id',
  pollEndpoint: 'https://crm.example.com/api/orders?status=new',
  authHeader: 'Bearer crm-api-key',
  intervalMs: 60000,
  lastSeenValue: 'ord_1041',
  lastPolledAt: '2026-03-02T09:14:00.120Z',
  nextPollAt: '2026-03-02T09:15:00.120Z',
  createdAt: '2026-03-01T16:02:11.450Z',
  updatedAt: '2026-03-02T09:14:00.120Z',
};

const deadLetterPage = {
  data: [
    {
      id: IDS.deadLetter,
      source: 'crm',
      targetType: 'polling',
      triggerKey: 'new-orders',
      requestPayload: { pollKey: 'new-orders', pollEndpoint: 'https://crm.example.com/api/orders?status=new' },
      failureReason: 'Poll request failed: 503 Service Unavailable',
      attemptCount: 1,
      replayedAt: null,
      replayStatus: null,
      createdAt: '2026-03-02T08:40:00.310Z',
      updatedAt: '2026-03-02T08:40:00.310Z',
    },
  ],
  total: 1,
  limit: 50,
  offset: 0,
};

const logRow = {
  invocationId: IDS.syncRun,
  projectId: IDS.automation,
  status: 'SUCCEEDED',
  mode: 'SYNC',
  targetType: 'AUTOMATION',
  triggerSource: 'WEBHOOK',
  createdAt: '2026-03-02T09:15:04.211Z',
  startedAt: '2026-03-02T09:15:04.211Z',
  completedAt: '2026-03-02T09:15:04.236Z',
  durationMs: 25,
  errorMessage: null,
  scheduledFor: null,
};

const apiSettings = {
  externalApiEnabled: true,
  defaultEnrollmentPolicy: 'ONE_TIME',
  defaultOnErrorPolicy: 'ABORT',
  defaultCallbackUrl: 'https://shop.example.com/runline/callback',
  defaultCallbackSecretSet: true,
  rateLimitPerMinute: 300,
  rateLimitWindowMs: null,
  updatedAt: '2026-03-02T09:20:31.007Z',
};

const template = {
  id: IDS.template,
  name: 'New order',
  endpoint: 'flows.trigger',
  body: { event: 'order.created', customerId: 'c-1042', orderId: '42' },
  createdAt: '2026-03-01T16:10:42.608Z',
  updatedAt: '2026-03-01T16:10:42.608Z',
};

const hookUrl = `${gateway}/v1/hooks/${IDS.hook}`;
const subscription = {
  id: IDS.subscription,
  provider: 'github',
  events: ['push', 'pull_request'],
  status: 'ACTIVE',
  endpoint: `${gateway}/v1/hooks/${IDS.subscription}`,
  providerId: '482913377',
  failureReason: null,
  createdAt: '2026-03-02T09:30:12.678Z',
};

const schedule = {
  id: 'daily-report',
  cron: '0 9 * * 1-5',
  every: null,
  timezone: 'Europe/Berlin',
  enabled: true,
  paused: false,
  overlap: 'SKIP',
  catchUp: 'LATEST',
  catchUpWindowSeconds: 3600,
  jitterSeconds: 0,
  startAt: null,
  endAt: null,
  payload: { report: 'daily' },
  nextFireTimes: ['2026-03-02T08:00:00.000Z', '2026-03-03T08:00:00.000Z', '2026-03-04T08:00:00.000Z', '2026-03-05T08:00:00.000Z', '2026-03-06T08:00:00.000Z'],
  lastFire: { scheduledTime: '2026-02-27T08:00:00.000Z', invocationId: IDS.asyncRun, status: 'SUCCEEDED' },
  skippedCount: 0,
};

const requestExampleBody = { triggerKey: 'external_event', event: 'order.created', customerId: 'c-1042', orderId: '42' };
const runUrl = `${orgPath}/flows/${IDS.chatbot}/trigger`;

export const ANSWERS = {
  botMessage: { invocationId: IDS.botRun, status: 'SUCCEEDED', result: { messages: ['Hi Ada'], actions: [], raw: { status: 'SUCCEEDED', result: null, waitingForInput: false } }, sessionId: 'chat-7f3a' },
  // Neither sessionId nor userId sent: a new session.
  botInvoke: { invocationId: IDS.botRun, status: 'QUEUED', sessionId: '67c503a6-0f35-4227-8ed8-5638705d433a' },
  flowTrigger: { invocationId: IDS.syncRun, status: 'SUCCEEDED', result: { messages: ['Order 42 is on its way'], actions: [] } },
  automationTrigger: { invocationId: IDS.syncRun, status: 'SUCCEEDED', result: { ok: true, orderId: '42' } },
  runAccepted: { invocationId: IDS.asyncRun, status: 'SCHEDULED', scheduledFor: '2026-03-02T10:15:04.460Z' },
  dryRun: {
    invocationId: null,
    status: 'VALID',
    dryRun: true,
    result: { validation: { valid: true, expectedKeys: ['event', 'customerId'], actualKeys: ['event', 'customerId', 'orderId'], missingKeys: [], errors: [] } },
  },
  invocation,
  rescheduled,
  pollingTriggerSaved: { data: { ...pollingTrigger, lastSeenValue: null, lastPolledAt: null, nextPollAt: '2026-03-01T16:02:11.450Z', updatedAt: '2026-03-01T16:02:11.450Z' } },
  pollingTriggers: { data: [pollingTrigger] },
  deadLetterPage,
  success: { success: true },
  bulkReplay: { matched: 3, succeeded: 2, failed: 1, pending: 0, remaining: 0 },
  schedules: { data: [schedule] },
  schedulePaused: { ...schedule, paused: true },
  scheduleRunStarted: { invocationId: IDS.asyncRun },
  scheduleBackfill: { count: 5 },
  hookAccepted: { invocationId: IDS.hookRun, status: 'QUEUED' },
  organization: { orgId: IDS.org, name: 'Acme Shop' },
  organizations: { data: [{ orgId: IDS.org, name: 'Acme Shop', role: 'OWNER' }] },
  plan: { orgId: IDS.org, monthlyQuota: 10000, rateLimitPerMinute: 120, rateLimitWindowMs: 60000, renewalDay: 1 },
  planUsage: { monthlyQuota: 10000, rateLimitPerMinute: 120, rateLimitWindowMs: 60000, renewalDay: 1, periodStart: '2026-03-01T00:00:00.000Z', used: 1873 },
  member: { orgId: IDS.org, userId: 'auth0|ada', role: 'EDITOR' },
  projectCreated: { projectId: IDS.chatbot, name: 'Order updates', type: 'CHATBOT' },
  projects: {
    data: [
      { projectId: IDS.chatbot, name: 'Order updates', type: 'CHATBOT', publishedVersion: 3, createdAt: '2026-02-12T10:00:51.954Z' },
      { projectId: IDS.automation, name: 'Payments', type: 'AUTOMATION', publishedVersion: 1, createdAt: '2026-02-12T10:00:52.010Z' },
    ],
  },
  project: { projectId: IDS.chatbot, name: 'Order updates', type: 'CHATBOT', publishedVersion: 3, draftVersion: 4, createdAt: '2026-02-12T10:00:51.954Z' },
  definitionStage: { version: 3, definition: REQUESTS.saveDefinition.definition },
  draftSaved: { projectId: IDS.chatbot, draftVersion: 4, draftUpdatedAt: '2026-03-02T09:18:24.274Z', publishedVersion: 3 },
  published: { publishedVersion: 4 },
  apiSettings,
  issuedToken: {
    id: IDS.token,
    name: 'CRM sync',
    prefix: 'rl_ext_YlLV',
    scopes: ['flow:trigger'],
    expiresAt: '2027-12-31T00:00:00.000Z',
    createdAt: '2026-03-02T09:22:17.317Z',
    token: 'rl_ext_YlLVhsMlhgjktAbRzhKVLxbGBaNn6Gl72XSWNL',
  },
  tokens: {
    data: [{ id: IDS.token, name: 'CRM sync', prefix: 'rl_ext_YlLV', scopes: ['flow:trigger'], expiresAt: '2027-12-31T00:00:00.000Z', lastUsedAt: '2026-03-02T09:15:04.200Z', createdAt: '2026-03-02T09:22:17.317Z' }],
  },
  runLogPage: { data: [logRow], nextCursor: 'MjAyNi0wMy0wMlQwOToxNTowNC4yMTEwMDBafDNhOWYxZTUy' },
  metrics: {
    from: '2026-03-01T10:00:00.000Z',
    to: '2026-03-02T10:00:00.000Z',
    bucket: 'day',
    totals: { triggered: 412, succeeded: 398, failed: 9, timeout: 1, cancelled: 2, inProgress: 2 },
    medianDurationMs: 26,
    p95DurationMs: 48,
    callbacks: { delivered: 151, failed: 3 },
    series: [
      { start: '2026-03-01T00:00:00.000Z', triggered: 230, succeeded: 224, failed: 5 },
      { start: '2026-03-02T00:00:00.000Z', triggered: 182, succeeded: 174, failed: 4 },
    ],
    recent: [logRow],
    schedules: [{ id: 'daily-report', fires: 2, succeeded: 2, failed: 0, latenessP50Ms: 3, latenessP99Ms: 7, latenessMaxMs: 7 }],
  },
  template,
  templates: { data: [template] },
  requestExample: {
    method: 'POST',
    url: runUrl,
    headers: { Authorization: 'Bearer $RUNLINE_TOKEN', 'Content-Type': 'application/json', 'x-idempotency-key': 'ec759329-72de-4502-b7a7-8d964f8b02c9' },
    body: requestExampleBody,
    snippets: {
      curl: `curl -sS -X POST '${runUrl}' \\\n  -H "Authorization: Bearer $RUNLINE_TOKEN" \\\n  -H 'Content-Type: application/json' \\\n  --data-raw '${JSON.stringify(requestExampleBody)}'`,
      javascript: `const response = await fetch(${JSON.stringify(runUrl)}, {\n  method: 'POST',\n  headers: { Authorization: \`Bearer \${process.env.RUNLINE_TOKEN}\`, 'Content-Type': 'application/json' },\n  body: JSON.stringify(${JSON.stringify(requestExampleBody)}),\n});`,
      python: `import os, requests\n\nresponse = requests.post(\n    ${JSON.stringify(runUrl)},\n    headers={"Authorization": f"Bearer {os.environ['RUNLINE_TOKEN']}"},\n    json=${JSON.stringify(requestExampleBody)},\n)`,
    },
  },
  createdHook: { id: IDS.hook, name: 'Shop orders', url: hookUrl, secret: 'rlwhsec_CMEnt84FRsY9Qr0AeWtPjNl-pWPmZJhBuQRpyXrJ-QA', status: 'ACTIVE', rateLimitPerMinute: 600, createdAt: '2026-03-02T09:25:22.626Z' },
  hooks: { data: [{ id: IDS.hook, name: 'Shop orders', url: hookUrl, status: 'ACTIVE', rateLimitPerMinute: 600, createdAt: '2026-03-02T09:25:22.626Z' }] },
  subscription,
  subscriptions: { data: [subscription] },
} satisfies Record<string, Example>;
