/**
 * The run lifecycle, start side: pure decisions in the manner of `decide`. From a request they
 * give a new run's first events and messages; from a run that comes up, the claim or the
 * refusal; from a scheduled run's job change, the cancel or the new time. Each result says
 * what the run must still be (`expected`), what its state row becomes (`change`), the events to
 * append and the messages to publish with them. The endings are in `run-endings.ts`.
 * Handlers load what these need, call them and hand the result to a repository.
 */
import type { BusMessage } from '@runline/bus';
import { JobKind, ModifyOutcome, QUOTA_EXCEEDED_MESSAGE } from '@runline/contracts';
import type { CompiledDefinition } from '@runline/engine';
import type { SecretBox } from '@runline/runtime';
import type { InvocationEventData, RequestInfo, RunModeName } from './invocation-event.js';
import type { InvocationDocument } from './invocation.projector.js';
import { callbackOnEnd, type CallbackTarget } from './run-callback.js';
import { runInvocationCommand } from './run-commands.js';
import type { RunPlan } from './run-plan.js';
import { jobNames, waitForJob, type JobOwner } from './scheduler-jobs.js';

export type InvocationStatus = 'QUEUED' | 'RUNNING' | 'SUSPENDED' | 'SUCCEEDED' | 'FAILED' | 'TIMEOUT' | 'CANCELLED' | 'SCHEDULED';

/** A run's lease: who runs it, until when unless renewed. */
export type Lease = { owner: string; expiresAt: Date };

/** The state row's change that goes with a transition. */
export interface StateChange {
  status: InvocationStatus;
  attempt?: number;
  lease?: Lease | null;
  runAfter?: Date | null;
  sealedResumeState?: string | null;
  /** The scheduler job the run waits for next (null: none). */
  waitingJob?: string | null;
  /** Where the run calls back (`callbackOnEnd`): its DeliverCallback is published with the transition that ends it. */
  callback?: CallbackTarget;
}

/** Which state the run must be in for the transition to apply (optimistic concurrency). */
export interface Expectation {
  status: InvocationStatus;
  /** The lease owner that must still hold a RUNNING run. */
  leaseOwner?: string;
  /** A QUEUED run must have been dispatched (not waiting for a retry's time). */
  dispatched?: boolean;
  /** The run must be waiting for this scheduler job (it fired, or is being cancelled/moved); null: for none. */
  waitingJob?: string | null;
  /** The run must be unchanged since it was read at this sequence. */
  sequence?: number;
}

/** One transition of a run: applies only while the run is as `expected`. */
export interface Transition {
  expected: Expectation;
  change: StateChange;
  events: InvocationEventData[];
  messages: BusMessage[];
}

/** How a new run is recorded: its first state and history, and the messages that go out with it. */
export interface FirstRecord {
  status: InvocationStatus;
  attempt: number;
  lease: Lease | null;
  /** The scheduler job a SCHEDULED run waits for; null otherwise. */
  waitingJob: string | null;
  events: InvocationEventData[];
  messages: BusMessage[];
}

/** What decides a new run's first record, besides the run itself. */
export interface NewRunRequest {
  mode: RunModeName;
  info: RequestInfo;
  /** Why the request fails at once (no definition, trigger check), or null. */
  rejection: string | null;
  /** When a scheduled run starts; null to start now. */
  runAt: Date | null;
  /** The lease a sync run is started under by this process. */
  lease: () => Lease;
}

/**
 * The first record of a new run: FAILED at once when rejected; SCHEDULED with the scheduler's
 * job when it has a start time; QUEUED with its RunInvocation command when async; RUNNING under
 * this process's lease when sync (executed by the caller).
 */
export function firstRecordOf(run: JobOwner, request: NewRunRequest): FirstRecord {
  const { info } = request;
  if (request.rejection !== null) {
    const failed: InvocationEventData = {
      type: 'InvocationFailed',
      errorMessage: request.rejection,
      kind: 'TRIGGER_CHECK',
      attempt: 0,
      request: info,
      steps: [],
      trace: null,
      durationMs: 0,
    };
    return { status: 'FAILED', attempt: 0, lease: null, waitingJob: null, events: [failed], messages: [] };
  }
  if (request.runAt !== null) {
    const wait = waitForJob(JobKind.START_RUN, jobNames.start(run.id), run, request.runAt);
    const scheduled: InvocationEventData = { type: 'InvocationScheduled', request: info, scheduledFor: request.runAt.toISOString(), schedulerJobName: wait.name };
    return { status: 'SCHEDULED', attempt: 0, lease: null, waitingJob: wait.name, events: [scheduled], messages: [wait.command] };
  }
  if (request.mode === 'ASYNC') {
    return { status: 'QUEUED', attempt: 0, lease: null, waitingJob: null, events: [queuedEvent(info)], messages: [runInvocationCommand(run)] };
  }
  return { status: 'RUNNING', attempt: 1, lease: request.lease(), waitingJob: null, events: [startedEvent(info)], messages: [] };
}

/**
 * A sync run under flow control is recorded QUEUED, with no start command: it starts through
 * its gate (flow-gate.repository.ts) while its request waits, within the request's deadline.
 */
export function heldSyncRecordOf(info: RequestInfo): FirstRecord {
  return { status: 'QUEUED', attempt: 0, lease: null, waitingJob: null, events: [queuedEvent(info)], messages: [] };
}

/** An earlier run of a debounce burst, once the burst closed (DESIGN section 13): CANCELLED, never run, no callback. */
export function debounced(supersededBy: string): Transition {
  return {
    expected: { status: 'QUEUED', dispatched: true },
    change: { status: 'CANCELLED', waitingJob: null },
    events: [{ type: 'InvocationCancelled', errorMessage: `Debounced: superseded by ${supersededBy}` }],
    messages: [],
  };
}

/** A sync run that could not start within its deadline (DESIGN section 13): TIMEOUT, never executed. */
export function waitTimedOut(): Transition {
  return {
    expected: { status: 'QUEUED', dispatched: true },
    change: { status: 'TIMEOUT', waitingJob: null },
    events: [{ type: 'InvocationTimedOut', errorMessage: SYNC_WAIT_TIMEOUT, steps: [], trace: null, durationMs: 0 }],
    messages: [],
  };
}

/** Our message (the spec has none for this case): the run waited for flow control past its deadline. */
export const SYNC_WAIT_TIMEOUT = 'Run timed out waiting for flow control';

/** The first event of a sync run. */
export function startedEvent(info: RequestInfo): InvocationEventData {
  return { type: 'InvocationStarted', attempt: 1, request: info };
}

/** The first event of an async run: accepted, waiting to start. */
export function queuedEvent(info: RequestInfo): InvocationEventData {
  return { type: 'InvocationQueued', request: info };
}

/**
 * Whether a run that starts now may be executed before it is recorded: its graph is
 * self-contained (no outside call, no pause), and it writes nothing else on the way (a bot turn
 * saves its session; a ONE_TIME enrollment is claimed before the run). Nothing of such a run is
 * visible outside before its one write, so a crash meanwhile leaves no trace: a sync caller gets
 * no answer, an async one no 202, as if the request had not arrived. (An async run is executed
 * so only while a run slot is free; see StartInvocationHandler.)
 */
export function recordsOnceEnded(plan: RunPlan, compiled: CompiledDefinition): boolean {
  if (plan.target === 'BOT') return false;
  // A run under flow control starts when its gate lets it (flow-gate.repository.ts), never inline.
  if (compiled.graphs[plan.graph]?.trigger?.flowControl !== undefined) return false;
  if (plan.enrollmentPolicy === 'ONE_TIME' && plan.enrollmentSubject !== null) return false;
  return compiled.graphs[plan.graph]?.selfContained === true;
}

/**
 * Whether an ending executed before the run was recorded can be its first record: it ends the
 * run. A retry (QUEUED for a scheduler job) or a pause is not written so; the caller records
 * the run as usual instead and lets it run again (a self-contained run changed nothing).
 */
export function endsInFirstRecord(ending: { change: { status: InvocationStatus } }): boolean {
  const { status } = ending.change;
  return status === 'SUCCEEDED' || status === 'FAILED' || status === 'TIMEOUT';
}

/** When a run recorded once it ended was accepted, started and ended. */
export interface EndedRunTimes {
  acceptedAt: Date;
  startedAt: Date;
  endedAt: Date;
}

/**
 * The record of a run executed before it was recorded: an async one queued at `acceptedAt`,
 * then (as a sync one) started at `startedAt` and ended at `endedAt` with `ending`, in one write.
 */
export function endedFirstRecordOf(
  info: RequestInfo,
  ending: { change: { status: InvocationStatus; callback?: CallbackTarget }; events: InvocationEventData[]; messages: BusMessage[] },
  times: EndedRunTimes,
): FirstRecord & { eventTimes: Date[]; callback?: CallbackTarget } {
  const queued = info.mode === 'ASYNC' ? [queuedEvent(info)] : [];
  return {
    status: ending.change.status,
    attempt: 1,
    lease: null,
    waitingJob: null,
    events: [...queued, startedEvent(info), ...ending.events],
    eventTimes: [...queued.map(() => times.acceptedAt), times.startedAt, ...ending.events.map(() => times.endedAt)],
    messages: ending.messages,
    ...(ending.change.callback ? { callback: ending.change.callback } : {}),
  };
}

/** Our message: a queued or scheduled run whose project was deleted before it came up. */
export const PROJECT_DELETED_MESSAGE = 'The project was deleted before the run started';

/** Why a run that came up fails instead of starting: what its InvocationFailed says. */
export interface Refusal {
  errorMessage: string;
  kind: 'EXTERNAL_API_DISABLED' | 'QUOTA_EXCEEDED' | 'PROJECT_DELETED';
}

/**
 * Why a queued or scheduled run may not start because of its project (read afresh when it
 * comes up: the spec fails such runs when the switch is off by then), or null. A project not
 * known here does not hold it up.
 */
export function projectRefusalOf(project: { deleted: boolean; externalApiEnabled: boolean } | null): Refusal | null {
  if (project?.deleted) return { errorMessage: PROJECT_DELETED_MESSAGE, kind: 'PROJECT_DELETED' };
  if (project && !project.externalApiEnabled) return { errorMessage: 'External API access is disabled for this project', kind: 'EXTERNAL_API_DISABLED' };
  return null;
}

/** A SCHEDULED run that comes up when its organization's monthly quota is used up (`monthly-quota.ts` decides). */
export const QUOTA_REFUSAL: Refusal = { errorMessage: QUOTA_EXCEEDED_MESSAGE, kind: 'QUOTA_EXCEEDED' };

/** The quota is checked again only when a SCHEDULED run comes up (spec); a queued run or a retry was counted already. */
export function rechecksQuota(from: Expectation): boolean {
  return from.status === 'SCHEDULED';
}

/** The run as the start side needs it. */
export type WaitingRun = JobOwner & { attempt: number };

/** A run that came up refused: FAILED, with its callback. */
export function refusedStart(run: WaitingRun, plan: RunPlan, from: Expectation, refusal: Refusal, secrets: SecretBox): Transition {
  return {
    expected: from,
    change: { status: 'FAILED', waitingJob: null, callback: callbackOnEnd(plan, 'FAILED', secrets) },
    events: [{ type: 'InvocationFailed', ...refusal, attempt: run.attempt, steps: [], trace: null, durationMs: 0 }],
    messages: [],
  };
}

/** A waiting run claimed for its next attempt under `lease`. */
export function claimedStart(run: WaitingRun, from: Expectation, lease: Lease): Transition {
  const attempt = run.attempt + 1;
  return { expected: from, change: { status: 'RUNNING', attempt, lease, waitingJob: null }, events: [{ type: 'InvocationStarted', attempt }], messages: [] };
}

/** A run SUSPENDED at a Wait node or a decided approval, claimed to continue under `lease` once its job `waitingJob` fired. */
export function claimedResume(run: WaitingRun, waitingJob: string, lease: Lease): Transition {
  return {
    expected: { status: 'SUSPENDED', waitingJob },
    change: { status: 'RUNNING', lease, waitingJob: null },
    events: [{ type: 'InvocationResumed', attempt: run.attempt }],
    messages: [],
  };
}

/** A SCHEDULED run whose job was cancelled: CANCELLED, never executes (no callback: the PATCH answers with the run). */
export function cancelled(jobName: string): Transition {
  return { expected: { status: 'SCHEDULED', waitingJob: jobName }, change: { status: 'CANCELLED', waitingJob: null }, events: [{ type: 'InvocationCancelled' }], messages: [] };
}

/** A SCHEDULED run whose job was moved to `runAt`. */
export function rescheduled(jobName: string, runAt: Date): Transition {
  return {
    expected: { status: 'SCHEDULED', waitingJob: jobName },
    change: { status: 'SCHEDULED', runAfter: runAt },
    events: [{ type: 'InvocationRescheduled', scheduledFor: runAt.toISOString() }],
    messages: [],
  };
}

/**
 * Why a client's cancel or reschedule cannot apply to the run as read: another organization's
 * run or none (NOT_FOUND), a sync run (NOT_ASYNC), a run that does not wait for its start job
 * (NOT_SCHEDULED: see `notScheduledOutcome` for whether it left while the request was in
 * flight); null when the scheduler's job row may decide.
 */
export function modifyBlockerOf(
  row: { orgId: string; mode: RunModeName; status: InvocationStatus; waitingJob: string | null } | null,
  orgId: string,
): ModifyOutcome | null {
  if (!row || row.orgId !== orgId) return ModifyOutcome.NOT_FOUND;
  if (row.mode !== 'ASYNC') return ModifyOutcome.NOT_ASYNC;
  if (row.status !== 'SCHEDULED' || row.waitingJob === null) return ModifyOutcome.NOT_SCHEDULED;
  return null;
}

/**
 * A run that is not SCHEDULED: if it was scheduled and its job fired after the gateway
 * received the request (`receivedAt`), it started while the request was in flight
 * (NO_LONGER_SCHEDULED); otherwise it was not scheduled when asked (NOT_SCHEDULED).
 */
export function notScheduledOutcome(document: InvocationDocument | null, receivedAt: Date): ModifyOutcome {
  const left = document ? leftScheduleAt(document) : null;
  return left !== null && left >= receivedAt.getTime() ? ModifyOutcome.NO_LONGER_SCHEDULED : ModifyOutcome.NOT_SCHEDULED;
}

/** The document's time at which a scheduled run left SCHEDULED (it started, or failed as it came up). */
function leftScheduleAt(document: InvocationDocument): number | null {
  if (document.schedulerStatus !== 'FIRED') return null;
  const at = document.startedAt ?? document.completedAt;
  return at === null ? null : Date.parse(at);
}
