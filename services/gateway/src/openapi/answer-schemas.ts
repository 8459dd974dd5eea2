/**
 * The shapes of the gateway's answers, as JSON Schema 2020-12 (OpenAPI 3.1 components). The
 * handlers return plain objects, not classes, so these are written here, once; the fuzz test
 * (e2e/openapi-fuzz.e2e-spec.ts) checks every answer it gets against them, so they cannot
 * drift from what the gateway really sends. Objects stay open (`additionalProperties` is not
 * false): a field added later is not a breaking change for a client.
 */
type Schema = Record<string, unknown>;

const string: Schema = { type: 'string' };
const nullableString: Schema = { type: ['string', 'null'] };
const dateTime: Schema = { type: 'string', format: 'date-time' };
const nullableDateTime: Schema = { type: ['string', 'null'], format: 'date-time' };
const integer: Schema = { type: 'integer' };
const nullableInteger: Schema = { type: ['integer', 'null'] };
const object: Schema = { type: 'object' };

const obj = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({ type: 'object', properties, required });
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const listOf = (item: Schema, extra: Record<string, Schema> = {}): Schema => obj({ data: { type: 'array', items: item }, ...extra });

const projectType: Schema = { type: 'string', enum: ['CHATBOT', 'AUTOMATION'] };
const memberRole: Schema = { type: 'string', enum: ['OWNER', 'EDITOR', 'VIEWER'] };
const invocationStatus: Schema = { type: 'string', enum: ['SCHEDULED', 'QUEUED', 'RUNNING', 'SUSPENDED', 'SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED'] };

/** One row of the run logs (and of the metrics' `recent`). */
const logRow = obj(
  {
    invocationId: string,
    projectId: string,
    status: invocationStatus,
    mode: string,
    targetType: string,
    triggerSource: string,
    createdAt: dateTime,
    startedAt: nullableDateTime,
    completedAt: nullableDateTime,
    durationMs: { type: ['number', 'null'] },
    errorMessage: nullableString,
    scheduledFor: nullableDateTime,
  },
  ['invocationId', 'projectId', 'status', 'createdAt'],
);

const counts = (names: string[]): Schema => obj(Object.fromEntries(names.map((name) => [name, integer])));

export const ANSWER_SCHEMAS: Record<string, Schema> = {
  Error: {
    type: 'object',
    description: 'Every refusal: `error` is the message; some carry more fields (see each response).',
    properties: { error: string },
    required: ['error'],
  },
  VersionError: obj({ error: { const: 'Unsupported API version' }, code: { const: 'UNSUPPORTED_API_VERSION' }, supportedVersions: { type: 'array', items: string } }),
  QuotaError: obj({ error: string, quota: obj({ limit: integer, used: integer }) }),
  FailedRun: {
    ...obj({ error: string, invocationId: string, status: { const: 'FAILED' } }),
    description: 'A sync run that ran and failed: the error, and the run to read it with GET /external-invocations/{invocationId}.',
  },
  HookRepeated: obj({ error: string, invocationId: string }),
  HookRejected: obj({ error: string, reasons: { type: 'array', items: string }, invocationId: nullableString }, ['error', 'reasons']),
  DefinitionError: { ...obj({ error: string, details: { type: 'array' } }, ['error']) },

  RunAnswer: {
    type: 'object',
    description: 'A finished sync run (`result`), an accepted async run (`scheduledFor` when scheduled), or a dry run (`invocationId` null).',
    properties: { invocationId: nullableString, status: string, result: {}, scheduledFor: nullableDateTime, sessionId: string, dryRun: { type: 'boolean' } },
    required: ['invocationId', 'status'],
  },
  Invocation: obj(
    {
      invocationId: string,
      status: invocationStatus,
      environment: string,
      triggerSource: string,
      mode: string,
      targetType: string,
      startedAt: nullableDateTime,
      completedAt: nullableDateTime,
      durationMs: { type: ['number', 'null'] },
      errorMessage: nullableString,
      requestPayload: {},
      result: {},
      trace: {},
      steps: { type: 'array' },
      callbackAttempts: { type: 'array' },
      scheduledFor: nullableDateTime,
      schedulerStatus: nullableString,
      schedulerJobName: nullableString,
      pendingApproval: { type: ['object', 'null'] },
      createdAt: dateTime,
      updatedAt: dateTime,
    },
    ['invocationId', 'status', 'triggerSource', 'mode', 'targetType', 'createdAt'],
  ),
  PollingTrigger: obj(
    {
      id: string,
      source: string,
      pollKey: string,
      pollEndpoint: string,
      dedupeField: string,
      authHeader: nullableString,
      intervalMs: integer,
      lastSeenValue: nullableString,
      lastPolledAt: nullableDateTime,
      nextPollAt: nullableDateTime,
      createdAt: dateTime,
      updatedAt: dateTime,
    },
    ['id', 'source', 'pollKey', 'pollEndpoint', 'intervalMs'],
  ),
  DeadLetterEvent: obj(
    {
      id: string,
      source: string,
      targetType: string,
      triggerKey: nullableString,
      requestPayload: {},
      failureReason: nullableString,
      attemptCount: integer,
      replayedAt: nullableDateTime,
      replayStatus: nullableString,
      createdAt: dateTime,
      updatedAt: dateTime,
    },
    ['id', 'source', 'targetType', 'createdAt'],
  ),
  DeadLetterPage: { ...listOf(ref('DeadLetterEvent'), { total: integer, limit: integer, offset: integer }) },
  Success: obj({ success: { const: true } }),
  BulkReplay: obj({ matched: integer, succeeded: integer, failed: integer, pending: integer, remaining: integer }, ['matched']),

  Organization: obj({ orgId: string, name: string }),
  OrganizationRow: obj({ orgId: string, name: string, role: memberRole }),
  Plan: obj({ orgId: string, monthlyQuota: nullableInteger, rateLimitPerMinute: nullableInteger, rateLimitWindowMs: nullableInteger, renewalDay: nullableInteger }),
  PlanUsage: obj({ monthlyQuota: nullableInteger, rateLimitPerMinute: nullableInteger, rateLimitWindowMs: nullableInteger, renewalDay: nullableInteger, periodStart: string, used: integer }),
  Member: obj({ orgId: string, userId: string, role: memberRole }),
  ProjectCreated: obj({ projectId: string, name: string, type: projectType }),
  ProjectSummary: obj({ projectId: string, name: string, type: projectType, publishedVersion: nullableInteger, createdAt: dateTime }),
  Project: obj({ projectId: string, name: string, type: projectType, publishedVersion: nullableInteger, draftVersion: nullableInteger, createdAt: dateTime }),
  DraftSaved: obj({ projectId: string, draftVersion: integer, draftUpdatedAt: dateTime, publishedVersion: nullableInteger }),
  Published: obj({ publishedVersion: integer }),
  DefinitionStage: obj({ version: nullableInteger, definition: { type: ['object', 'null'] } }),
  ApiSettings: obj({
    externalApiEnabled: { type: 'boolean' },
    defaultEnrollmentPolicy: { type: 'string', enum: ['ONE_TIME', 'EVERY_MATCH'] },
    defaultOnErrorPolicy: { type: 'string', enum: ['ABORT', 'CONTINUE'] },
    defaultCallbackUrl: nullableString,
    defaultCallbackSecretSet: { type: 'boolean' },
    rateLimitPerMinute: nullableInteger,
    rateLimitWindowMs: nullableInteger,
    updatedAt: dateTime,
  }),
  ApiToken: obj({ id: string, name: string, prefix: string, scopes: { type: 'array', items: string }, expiresAt: nullableDateTime, lastUsedAt: nullableDateTime, createdAt: dateTime }),
  IssuedApiToken: {
    ...obj({ id: string, name: string, prefix: string, scopes: { type: 'array', items: string }, expiresAt: nullableDateTime, createdAt: dateTime, token: string }),
    description: 'The token itself is shown here only, once.',
  },
  RunLogPage: obj({ data: { type: 'array', items: logRow }, nextCursor: nullableString }),
  InvocationMetrics: obj(
    {
      from: dateTime,
      to: dateTime,
      bucket: { type: 'string', enum: ['hour', 'day'] },
      totals: counts(['triggered', 'succeeded', 'failed', 'timeout', 'cancelled', 'inProgress']),
      medianDurationMs: { type: ['number', 'null'] },
      p95DurationMs: { type: ['number', 'null'] },
      callbacks: counts(['delivered', 'failed']),
      series: { type: 'array', items: obj({ start: dateTime, triggered: integer, succeeded: integer, failed: integer }) },
      recent: { type: 'array', items: logRow, maxItems: 10 },
    },
    ['from', 'to', 'totals', 'callbacks', 'series', 'recent'],
  ),
  Template: obj({ id: string, name: string, endpoint: string, body: object, createdAt: dateTime, updatedAt: dateTime }),
  RequestExample: obj({
    method: { const: 'POST' },
    url: string,
    headers: { type: 'object', additionalProperties: string },
    body: object,
    snippets: obj({ curl: string, javascript: string, python: string }),
  }),
  InboundHook: obj({ id: string, name: string, url: string, status: string, rateLimitPerMinute: integer, createdAt: nullableDateTime }, ['id', 'name', 'url', 'status']),
  CreatedInboundHook: {
    ...obj({ id: string, name: string, url: string, secret: string, status: string, rateLimitPerMinute: integer, createdAt: nullableDateTime }, ['id', 'name', 'url', 'secret', 'status']),
    description: 'The secret is shown here only, once.',
  },
  HookAccepted: obj({ invocationId: string, status: string }),
  WebhookSubscription: {
    ...obj(
      {
        id: string,
        provider: { type: 'string', enum: ['stripe', 'shopify', 'github'] },
        events: { type: 'array', items: string },
        status: { type: 'string', enum: ['ACTIVE', 'FAILED', 'REVOKED', 'PENDING'] },
        endpoint: string,
        providerId: nullableString,
        failureReason: nullableString,
        createdAt: nullableDateTime,
      },
      ['id', 'provider', 'events', 'status', 'endpoint'],
    ),
    description: 'Never the credentials. A provider error leaves it FAILED with the provider’s message in `failureReason`.',
  },
};
