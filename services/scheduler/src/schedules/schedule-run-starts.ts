import { Inject, Injectable } from '@nestjs/common';
import { BUS, type Bus } from '@runline/bus';
import {
  create,
  fromBinary,
  GetInvocationReplySchema,
  GetInvocationRequestSchema,
  INVOCATION_QUERY_SUBJECTS,
  INVOCATION_REQUEST_SUBJECTS,
  notStartedReason,
  RunMode,
  RunTarget,
  StartInvocationReplySchema,
  StartInvocationRequestSchema,
  timestampFromDate,
  toBinary,
} from '@runline/contracts';
import { SchedulerConfig } from '../config.js';
import type { ScheduleRow } from './schedule-rows.repository.js';

/** How a fire's start ended: the run, or why none was recorded. */
export type StartAnswer = { invocationId: string; status: string } | { invocationId: null; reason: string; unavailable: boolean };

/**
 * The idempotency key of a fire's run: the schedule and the nominal time. The invocation service
 * answers a second start with the same key with the first run, so a fire sent again (a pass that
 * rolled back after its runs were recorded, a takeover after a crash) records one run.
 */
export function fireIdempotencyKey(scheduleId: string, scheduledTime: Date): string {
  return `schedule:${scheduleId}@${scheduledTime.toISOString()}`;
}

/** The request body of a fire's run (DESIGN.md section 12): `input.event` "schedule", the schedule's payload, every fire runs. */
export function fireBody(schedule: Pick<ScheduleRow, 'definition'>): Record<string, unknown> {
  const payload = schedule.definition.payload;
  return { event: 'schedule', payload: payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? payload : {}, enrollmentPolicy: 'EVERY_MATCH' };
}

/**
 * Asks the invocation service to start a fire's run, the way the polling service starts a polled
 * item's run: request/reply on `invocation.req.start-invocation`, async, with the fire in
 * `schedule_fire` and the configuration version of the publish that set the schedule (so the
 * run never uses an older definition than that publish).
 */
@Injectable()
export class ScheduleRunStarts {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(SchedulerConfig) private readonly config: SchedulerConfig,
  ) {}

  async start(schedule: ScheduleRow, scheduledTime: Date, configVersion = schedule.configVersion): Promise<StartAnswer> {
    const request = create(StartInvocationRequestSchema, {
      orgId: schedule.orgId,
      projectId: schedule.projectId,
      tokenId: '',
      target: RunTarget.AUTOMATION,
      mode: RunMode.ASYNC,
      bodyJson: JSON.stringify(fireBody(schedule)),
      idempotencyKey: fireIdempotencyKey(schedule.scheduleId, scheduledTime),
      configVersion: BigInt(configVersion),
      receivedAt: timestampFromDate(new Date()),
      triggerSource: 'SCHEDULE',
      scheduleFire: { scheduleId: schedule.scheduleId, scheduledTime: timestampFromDate(scheduledTime) },
    });
    try {
      const reply = fromBinary(
        StartInvocationReplySchema,
        await this.bus.request(INVOCATION_REQUEST_SUBJECTS.START_INVOCATION, toBinary(StartInvocationRequestSchema, request), {
          timeoutMs: this.config.SCHEDULER_RUN_REQUEST_TIMEOUT_MS,
        }),
      );
      const reason = notStartedReason(reply);
      if (reason !== null) return { invocationId: null, reason, unavailable: reply.unavailableReason !== '' || reply.quotaUnavailable };
      return { invocationId: reply.invocationId, status: reply.status };
    } catch (error) {
      return { invocationId: null, reason: `The run could not be started: ${error instanceof Error ? error.message : String(error)}`, unavailable: true };
    }
  }

  /** The run's status as the invocation service has it now, or null when it cannot tell (then the caller keeps what it knew). */
  async runStatus(orgId: string, invocationId: string): Promise<string | null> {
    try {
      const reply = fromBinary(
        GetInvocationReplySchema,
        await this.bus.request(INVOCATION_QUERY_SUBJECTS.GET_INVOCATION, toBinary(GetInvocationRequestSchema, create(GetInvocationRequestSchema, { orgId, invocationId })), {
          timeoutMs: this.config.SCHEDULER_RUN_REQUEST_TIMEOUT_MS,
        }),
      );
      if (!reply.found) return null;
      const document = JSON.parse(reply.invocationJson) as { status?: unknown };
      return typeof document.status === 'string' ? document.status : null;
    } catch {
      return null;
    }
  }
}
