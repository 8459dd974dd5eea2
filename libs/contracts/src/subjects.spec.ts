import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { StreamSpec } from './subjects.js';
import { EVENT_REGISTRY, EVENT_TYPES } from './event-registry.js';
import {
  CALLBACK_COMMAND_SUBJECTS,
  CALLBACK_EVENT_SUBJECTS,
  DEAD_LETTER_QUERY_SUBJECTS,
  DEAD_LETTER_REQUEST_SUBJECTS,
  GATEWAY_EVENT_SUBJECTS,
  INVOCATION_COMMAND_SUBJECTS,
  INVOCATION_EVENT_SUBJECTS,
  INVOCATION_QUERY_SUBJECTS,
  INVOCATION_REQUEST_SUBJECTS,
  POLLING_EVENT_SUBJECTS,
  POLLING_QUERY_SUBJECTS,
  POLLING_REQUEST_SUBJECTS,
  PROJECT_CHANGE_SUBJECTS,
  SCHEDULER_COMMAND_SUBJECTS,
  SCHEDULER_EVENT_SUBJECTS,
  SCHEDULER_QUERY_SUBJECTS,
  SCHEDULER_REQUEST_SUBJECTS,
  STREAM_NAMES,
  STREAMS,
  WEBHOOK_EVENT_SUBJECTS,
  WEBHOOK_QUERY_SUBJECTS,
  WEBHOOK_REQUEST_SUBJECTS,
} from './subjects.js';

/** NATS subject matching: `*` is one token, `>` one or more trailing tokens. */
function matches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return s.length > i;
    if (i >= s.length || (f[i] !== '*' && f[i] !== s[i])) return false;
  }
  return f.length === s.length;
}

function streamsCapturing(subject: string): StreamSpec[] {
  return STREAMS.filter((stream) => stream.subjects.some((filter) => matches(filter, subject)));
}

describe('subjects', () => {
  it('declares the streams with their subjects and retention', () => {
    expect(STREAMS).toEqual([
      { name: 'GATEWAY_EVENTS', subjects: ['gateway.evt.>'], retention: 'limits' },
      { name: 'INVOCATION_EVENTS', subjects: ['invocation.evt.>'], retention: 'limits' },
      { name: 'INVOCATION_COMMANDS', subjects: ['invocation.cmd.>'], retention: 'workqueue' },
      { name: 'SCHEDULER_EVENTS', subjects: ['scheduler.evt.>'], retention: 'limits' },
      { name: 'SCHEDULER_COMMANDS', subjects: ['scheduler.cmd.>'], retention: 'workqueue' },
      { name: 'POLLING_EVENTS', subjects: ['polling.evt.>'], retention: 'limits' },
      { name: 'CALLBACK_EVENTS', subjects: ['callback.evt.>'], retention: 'limits' },
      { name: 'CALLBACK_COMMANDS', subjects: ['callback.cmd.>'], retention: 'workqueue' },
      { name: 'WEBHOOK_EVENTS', subjects: ['webhook.evt.>'], retention: 'limits' },
    ]);
    expect(Object.values(STREAM_NAMES)).toEqual(STREAMS.map((stream) => stream.name));
  });

  it('keeps the persistent subject names unchanged', () => {
    expect(GATEWAY_EVENT_SUBJECTS).toEqual({
      ORGANIZATION_CREATED: 'gateway.evt.organization-created',
      ORGANIZATION_PLAN_CHANGED: 'gateway.evt.organization-plan-changed',
      PROJECT_CREATED: 'gateway.evt.project-created',
      PROJECT_API_SETTINGS_CHANGED: 'gateway.evt.project-api-settings-changed',
      DEFINITION_PUBLISHED: 'gateway.evt.definition-published',
      API_TOKEN_REVOKED: 'gateway.evt.api-token-revoked',
      PROJECT_DELETED: 'gateway.evt.project-deleted',
      INBOUND_HOOK_REVOKED: 'gateway.evt.inbound-hook-revoked',
    });
    expect(INVOCATION_QUERY_SUBJECTS.GET_INVOCATION).toBe('invocation.qry.get-invocation');
    expect(INVOCATION_REQUEST_SUBJECTS).toEqual({
      START_INVOCATION: 'invocation.req.start-invocation',
      MODIFY_INVOCATION: 'invocation.req.modify-invocation',
      APPLY_GATEWAY_CHANGE: 'invocation.req.apply-gateway-change',
      DECIDE_APPROVAL: 'invocation.req.decide-approval',
    });
    expect(SCHEDULER_REQUEST_SUBJECTS).toEqual({
      CANCEL_JOB: 'scheduler.req.cancel-job',
      RESCHEDULE_JOB: 'scheduler.req.reschedule-job',
      APPLY_GATEWAY_CHANGE: 'scheduler.req.apply-gateway-change',
      CHANGE_SCHEDULE: 'scheduler.req.change-schedule',
      TRIGGER_SCHEDULE: 'scheduler.req.trigger-schedule',
      BACKFILL_SCHEDULE: 'scheduler.req.backfill-schedule',
    });
    expect(SCHEDULER_QUERY_SUBJECTS).toEqual({ LIST_SCHEDULES: 'scheduler.qry.list-schedules' });
    expect(SCHEDULER_COMMAND_SUBJECTS).toEqual({ SCHEDULE_JOB: 'scheduler.cmd.schedule-job', FIRE_RUN_ENDED: 'scheduler.cmd.fire-run-ended' });
    expect(Object.values(SCHEDULER_EVENT_SUBJECTS)).toEqual([
      'scheduler.evt.scheduled-job-fired',
      'scheduler.evt.scheduled-job-cancelled',
      'scheduler.evt.scheduled-job-rescheduled',
    ]);
    expect(INVOCATION_COMMAND_SUBJECTS.RUN_INVOCATION).toBe('invocation.cmd.run-invocation');
    expect(CALLBACK_COMMAND_SUBJECTS).toEqual({ DELIVER_CALLBACK: 'callback.cmd.deliver-callback' });
    expect(CALLBACK_EVENT_SUBJECTS).toEqual({ CALLBACK_ATTEMPTED: 'callback.evt.callback-attempted' });
    expect(POLLING_EVENT_SUBJECTS).toEqual({ POLL_FAILED: 'polling.evt.poll-failed', POLLED_ITEM_RUN_FAILED: 'polling.evt.polled-item-run-failed' });
    expect(POLLING_REQUEST_SUBJECTS).toEqual({
      REGISTER_POLLING_TRIGGER: 'polling.req.register-polling-trigger',
      DELETE_POLLING_TRIGGER: 'polling.req.delete-polling-trigger',
      APPLY_GATEWAY_CHANGE: 'polling.req.apply-gateway-change',
    });
    expect(POLLING_QUERY_SUBJECTS).toEqual({ LIST_POLLING_TRIGGERS: 'polling.qry.list-polling-triggers' });
    expect(DEAD_LETTER_REQUEST_SUBJECTS).toEqual({
      REPLAY_DEAD_LETTER: 'dead-letter.req.replay-dead-letter',
      BULK_REPLAY_DEAD_LETTERS: 'dead-letter.req.bulk-replay-dead-letters',
    });
    expect(DEAD_LETTER_QUERY_SUBJECTS).toEqual({ LIST_DEAD_LETTERS: 'dead-letter.qry.list-dead-letters' });
    expect(Object.values(INVOCATION_EVENT_SUBJECTS)).toEqual([
      'invocation.evt.invocation-queued',
      'invocation.evt.invocation-started',
      'invocation.evt.invocation-succeeded',
      'invocation.evt.invocation-failed',
      'invocation.evt.invocation-timed-out',
      'invocation.evt.invocation-suspended',
      'invocation.evt.invocation-retry-scheduled',
      'invocation.evt.invocation-retries-exhausted',
      'invocation.evt.invocation-scheduled',
      'invocation.evt.invocation-rescheduled',
      'invocation.evt.invocation-cancelled',
      'invocation.evt.invocation-resumed',
      'invocation.evt.invocation-approval-decided',
    ]);
  });

  it('gives every event type its own subject, captured by exactly one stream of its domain', () => {
    const subjects = Object.values(EVENT_REGISTRY).map((registration) => registration.subject);
    expect(new Set(subjects).size).toBe(Object.values(EVENT_TYPES).length);
    const streamOf: Record<string, string> = {
      'gateway.evt': STREAM_NAMES.GATEWAY_EVENTS,
      'invocation.evt': STREAM_NAMES.INVOCATION_EVENTS,
      'invocation.cmd': STREAM_NAMES.INVOCATION_COMMANDS,
      'scheduler.evt': STREAM_NAMES.SCHEDULER_EVENTS,
      'scheduler.cmd': STREAM_NAMES.SCHEDULER_COMMANDS,
      'polling.evt': STREAM_NAMES.POLLING_EVENTS,
      'callback.evt': STREAM_NAMES.CALLBACK_EVENTS,
      'callback.cmd': STREAM_NAMES.CALLBACK_COMMANDS,
      'webhook.evt': STREAM_NAMES.WEBHOOK_EVENTS,
    };
    for (const subject of subjects) {
      expect(subject).toMatch(/^[a-z]+\.(evt|cmd)\.[a-z]+(-[a-z]+)*$/);
      const domainAndKind = subject.split('.').slice(0, 2).join('.');
      expect(streamsCapturing(subject).map((stream) => stream.name)).toEqual([streamOf[domainAndKind]]);
    }
  });

  it('names as project changes exactly the gateway events that carry a config_version', () => {
    const gateway = Object.values(EVENT_REGISTRY).filter((registration) => registration.subject.startsWith('gateway.evt.'));
    const carrying = gateway.filter((registration) => registration.schema.fields.some((field) => field.name === 'config_version'));
    expect([...PROJECT_CHANGE_SUBJECTS].sort()).toEqual(carrying.map((registration) => registration.subject).sort());
  });

  it('keeps request/reply subjects out of every stream', () => {
    // A stream capturing a request subject would store requests and break the reply path.
    const requestSubjects = [
      ...Object.values(INVOCATION_QUERY_SUBJECTS),
      ...Object.values(INVOCATION_REQUEST_SUBJECTS),
      ...Object.values(SCHEDULER_REQUEST_SUBJECTS),
      ...Object.values(POLLING_REQUEST_SUBJECTS),
      ...Object.values(POLLING_QUERY_SUBJECTS),
      ...Object.values(DEAD_LETTER_REQUEST_SUBJECTS),
      ...Object.values(DEAD_LETTER_QUERY_SUBJECTS),
      ...Object.values(WEBHOOK_REQUEST_SUBJECTS),
      ...Object.values(WEBHOOK_QUERY_SUBJECTS),
    ];
    for (const subject of requestSubjects) {
      expect(streamsCapturing(subject)).toEqual([]);
    }
  });

  it('has streams whose subjects do not overlap', () => {
    for (const stream of STREAMS) {
      for (const other of STREAMS.filter((candidate) => candidate !== stream)) {
        for (const filter of stream.subjects) {
          const probe = filter.replace('>', 'probe');
          expect(other.subjects.some((otherFilter) => matches(otherFilter, probe))).toBe(false);
        }
      }
    }
  });

  it('self-checks the subject matcher', () => {
    expect(matches('gateway.evt.>', 'gateway.evt.project-created')).toBe(true);
    expect(matches('gateway.evt.>', 'gateway.evt')).toBe(false);
    expect(matches('gateway.*.x', 'gateway.evt.x')).toBe(true);
    expect(matches('invocation.evt.>', 'invocation.qry.get-invocation')).toBe(false);
  });

  it('is listed in docs/events.md: every stream and every subject', () => {
    const section = readFileSync(fileURLToPath(new URL('../../../docs/events.md', import.meta.url)), 'utf8');
    const invocationRow = section.split('\n').find((line) => line.startsWith('| `INVOCATION_EVENTS`')) ?? '';
    const every = [
      GATEWAY_EVENT_SUBJECTS, INVOCATION_EVENT_SUBJECTS, INVOCATION_COMMAND_SUBJECTS, INVOCATION_REQUEST_SUBJECTS, INVOCATION_QUERY_SUBJECTS,
      SCHEDULER_EVENT_SUBJECTS, SCHEDULER_COMMAND_SUBJECTS, SCHEDULER_REQUEST_SUBJECTS, SCHEDULER_QUERY_SUBJECTS, POLLING_EVENT_SUBJECTS, POLLING_REQUEST_SUBJECTS,
      POLLING_QUERY_SUBJECTS, DEAD_LETTER_REQUEST_SUBJECTS, DEAD_LETTER_QUERY_SUBJECTS, CALLBACK_EVENT_SUBJECTS, CALLBACK_COMMAND_SUBJECTS,
      WEBHOOK_EVENT_SUBJECTS, WEBHOOK_REQUEST_SUBJECTS, WEBHOOK_QUERY_SUBJECTS,
    ].flatMap((subjects) => Object.values(subjects));
    // The run transitions are written `-started`, `-succeeded`, … in their row.
    const listed = (subject: string) =>
      section.includes(`\`${subject}\``) || (subject.startsWith('invocation.evt.invocation-') && invocationRow.includes(`\`-${subject.slice('invocation.evt.invocation-'.length)}\``));
    expect(every.filter((subject) => !listed(subject))).toEqual([]);
    expect(STREAMS.map((stream) => stream.name).filter((name) => !section.includes(`| \`${name}\` |`))).toEqual([]);
  });
});
