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
/** Every id of ours (organizations, projects, runs, tokens, triggers, events, templates, hooks, subscriptions) is a UUID. */
export const uuid: Schema = { type: 'string', format: 'uuid' };
const nullableUuid: Schema = { type: ['string', 'null'], format: 'uuid' };
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
    invocationId: uuid,
    projectId: uuid,
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
    ...obj({ error: string, invocationId: uuid, status: { type: 'string', enum: ['FAILED', 'TIMEOUT'] } }),
    description: 'A sync run that ran and failed (or timed out): the error, and the run to read it with GET /external-invocations/{invocationId}.',
  },
  HookRepeated: obj({ error: string, invocationId: uuid }),
  HookRejected: obj({ error: string, reasons: { type: 'array', items: string }, invocationId: nullableUuid }, ['error', 'reasons']),
  DefinitionError: { ...obj({ error: string, details: { type: 'array' } }, ['error']) },

  RunAnswer: {
    type: 'object',
    description:
      'A finished sync run (`result`), an accepted async run (`scheduledFor` when scheduled), or a dry run (`invocationId` null). ' +
      'A repeat of an idempotency key answers the first run, with `idempotentReplay` true (and its `error` if it failed).',
    properties: {
      invocationId: nullableUuid,
      status: string,
      result: {},
      scheduledFor: nullableDateTime,
      sessionId: string,
      dryRun: { type: 'boolean' },
      idempotentReplay: { const: true },
      error: string,
    },
    required: ['invocationId', 'status'],
  },
  Invocation: obj(
    {
      invocationId: uuid,
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
      // Ours, after the spec's fields (runs recorded before they existed lack them).
      enrollmentPolicy: { type: ['string', 'null'], enum: ['ONE_TIME', 'EVERY_MATCH', null] },
      onErrorPolicy: { type: 'string', enum: ['ABORT', 'CONTINUE'] },
      attempts: integer,
      maxAttempts: integer,
      definitionVersion: {
        type: ['integer', 'null'],
        minimum: 1,
        description:
          'The published definition version the run used: the one its latest executed attempt ran (also in `trace.definitionVersion`), else the one in force when it was accepted. ' +
          'Null for a draft test run (`runtimeStage: app`) or a project with nothing published; absent on runs recorded before this field existed.',
      },
      sessionId: string,
    },
    ['invocationId', 'status', 'triggerSource', 'mode', 'targetType', 'createdAt'],
  ),
  PollingTrigger: obj(
    {
      id: uuid,
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
      id: uuid,
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
  // A Schedule trigger of the published automation (DESIGN section 12); a field the schedule does not set is null.
  Schedule: obj({
    id: string,
    cron: nullableString,
    every: nullableString,
    timezone: string,
    enabled: { type: 'boolean' },
    paused: { type: 'boolean' },
    overlap: { type: 'string', enum: ['SKIP', 'BUFFER_ONE', 'ALLOW'] },
    catchUp: { type: 'string', enum: ['NONE', 'LATEST', 'ALL'] },
    catchUpWindowSeconds: integer,
    jitterSeconds: integer,
    startAt: nullableDateTime,
    endAt: nullableDateTime,
    payload: {},
    nextFireTimes: { type: 'array', items: dateTime },
    lastFire: { anyOf: [obj({ scheduledTime: dateTime, invocationId: uuid, status: { type: ['string', 'null'] } }), { type: 'null' }] },
    skippedCount: integer,
  }),
  ScheduleRunStarted: obj({ invocationId: uuid }),
  ScheduleBackfill: obj({ count: integer }),
  BulkReplay: obj({ matched: integer, succeeded: integer, failed: integer, pending: integer, remaining: integer }, ['matched']),

  Organization: obj({ orgId: uuid, name: string }),
  OrganizationRow: obj({ orgId: uuid, name: string, role: memberRole }),
  Plan: obj({ orgId: uuid, monthlyQuota: nullableInteger, rateLimitPerMinute: nullableInteger, rateLimitWindowMs: nullableInteger, renewalDay: nullableInteger }),
  PlanUsage: obj({ monthlyQuota: nullableInteger, rateLimitPerMinute: nullableInteger, rateLimitWindowMs: nullableInteger, renewalDay: nullableInteger, periodStart: string, used: integer }),
  // userId is the member's sign-in subject (the JWT's `sub`), not an id of ours.
  Member: obj({ orgId: uuid, userId: string, role: memberRole }),
  ProjectCreated: obj({ projectId: uuid, name: string, type: projectType }),
  ProjectSummary: obj({ projectId: uuid, name: string, type: projectType, publishedVersion: nullableInteger, createdAt: dateTime }),
  Project: obj({ projectId: uuid, name: string, type: projectType, publishedVersion: nullableInteger, draftVersion: nullableInteger, createdAt: dateTime }),
  DraftSaved: obj({ projectId: uuid, draftVersion: integer, draftUpdatedAt: dateTime, publishedVersion: nullableInteger }),
  Published: obj({ publishedVersion: integer }),
  DefinitionStage: obj({ version: nullableInteger, definition: { type: ['object', 'null'] } }),
  // publishedBy is the publisher's sign-in subject; null for a version published before the history was kept.
  DefinitionVersionRow: obj({ version: integer, publishedBy: nullableString, publishedAt: dateTime }),
  DefinitionVersion: obj({ version: integer, definition: object, publishedBy: nullableString, publishedAt: dateTime }),
  DefinitionSchema: obj({
    requiredGraphs: { type: 'array', items: { type: 'string', enum: ['bot', 'flow', 'workflow'] } },
    optionalGraphs: { type: 'array', items: { type: 'string', enum: ['bot', 'flow', 'workflow'] } },
    starterDefinition: object,
    schema: object,
  }),
  ApiSettings: obj({
    externalApiEnabled: { type: 'boolean' },
    defaultEnrollmentPolicy: { type: 'string', enum: ['ONE_TIME', 'EVERY_MATCH'] },
    defaultOnErrorPolicy: { type: 'string', enum: ['ABORT', 'CONTINUE'] },
    defaultCallbackUrl: nullableString,
    defaultCallbackSecretSet: { type: 'boolean' },
    rateLimitPerMinute: nullableInteger,
    rateLimitWindowMs: nullableInteger,
    // RUNNING runs of the project at once, every target together (flow control); null = no limit.
    maxConcurrentRuns: nullableInteger,
    updatedAt: dateTime,
  }),
  ApiToken: obj({ id: uuid, name: string, prefix: string, scopes: { type: 'array', items: string }, expiresAt: nullableDateTime, lastUsedAt: nullableDateTime, createdAt: dateTime }),
  IssuedApiToken: {
    ...obj({ id: uuid, name: string, prefix: string, scopes: { type: 'array', items: string }, expiresAt: nullableDateTime, createdAt: dateTime, token: string }),
    description: 'The token itself is shown here only, once.',
  },
  RunLogPage: obj({ data: { type: 'array', items: logRow }, nextCursor: nullableString }),
  InvocationMetrics: obj(
    {
      from: dateTime,
      to: dateTime,
      bucket: { type: 'string', enum: ['hour', 'day'] },
      // waiting: runs flow control holds back now, whatever from and to say (DESIGN section 13).
      totals: counts(['triggered', 'succeeded', 'failed', 'timeout', 'cancelled', 'inProgress', 'waiting']),
      // totals.waiting by what each run waits for (trace.flowControl.waitingFor).
      waitingByReason: counts(['concurrency', 'throttle', 'debounce', 'project']),
      medianDurationMs: { type: ['number', 'null'] },
      p95DurationMs: { type: ['number', 'null'] },
      callbacks: counts(['delivered', 'failed']),
      series: { type: 'array', items: obj({ start: dateTime, triggered: integer, succeeded: integer, failed: integer }) },
      recent: { type: 'array', items: logRow, maxItems: 10 },
      // With projectId only: each Schedule trigger's runs in the window; lateness is startedAt − scheduledFor (ms).
      schedules: {
        type: 'array',
        items: obj({
          id: string,
          fires: integer,
          succeeded: integer,
          failed: integer,
          latenessP50Ms: nullableInteger,
          latenessP99Ms: nullableInteger,
          latenessMaxMs: nullableInteger,
        }),
      },
    },
    ['from', 'to', 'totals', 'waitingByReason', 'callbacks', 'series', 'recent'],
  ),
  Template: obj({ id: uuid, name: string, endpoint: string, body: object, createdAt: dateTime, updatedAt: dateTime }),
  RequestExample: obj({
    method: { const: 'POST' },
    url: string,
    headers: { type: 'object', additionalProperties: string },
    body: object,
    snippets: obj({ curl: string, javascript: string, python: string }),
  }),
  InboundHook: obj({ id: uuid, name: string, url: string, status: string, rateLimitPerMinute: integer, createdAt: nullableDateTime }, ['id', 'name', 'url', 'status']),
  CreatedInboundHook: {
    ...obj({ id: uuid, name: string, url: string, secret: string, status: string, rateLimitPerMinute: integer, createdAt: nullableDateTime }, ['id', 'name', 'url', 'secret', 'status']),
    description: 'The secret is shown here only, once.',
  },
  HookAccepted: obj({ invocationId: uuid, status: string }),
  WebhookSubscription: {
    ...obj(
      {
        id: uuid,
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
