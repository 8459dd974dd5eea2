import type { RunlineClient } from '@runline/api-client';
import type { Client } from 'openapi-fetch';
import type { ApiCall } from './use-api.js';

/**
 * The console API of Schedule triggers (DESIGN section 12), as calls for `useResource` and
 * `useApiCall`. The routes are typed here from DESIGN's contract until the generated client
 * (`npm run generate:client`) has them; then these types become `Schema<'Schedule'>` & co. and
 * the cast below goes.
 */

/** One schedule of the published automation, as `GET …/schedules` lists it. */
export interface Schedule {
  id: string;
  /** Exactly one of `cron` and `every` is set. */
  cron: string | null;
  every: string | null;
  /** IANA name; "UTC" for an `every` schedule. */
  timezone: string;
  enabled: boolean;
  paused: boolean;
  overlap: 'SKIP' | 'BUFFER_ONE' | 'ALLOW';
  catchUp: 'NONE' | 'LATEST' | 'ALL';
  /** The next 5 nominal fire times, ISO 8601 UTC; for a paused schedule the times it would fire if resumed. */
  nextFireTimes: string[];
  lastFire: { scheduledTime: string; invocationId: string; status: string } | null;
  skippedCount: number;
}

interface ProjectPath {
  orgId: string;
  projectId: string;
}
interface SchedulePath extends ProjectPath {
  id: string;
}
type Json<T> = { headers: { [name: string]: unknown }; content: { 'application/json': T } };
type ErrorAnswer = Json<{ error: string }>;
interface Answers<Answer, Status extends number> {
  responses: { [status in Status]: Json<Answer> } & { 400: ErrorAnswer; 401: ErrorAnswer; 403: ErrorAnswer; 404: ErrorAnswer; 503: ErrorAnswer };
}
interface Operation<Path, Answer, Status extends number> extends Answers<Answer, Status> {
  parameters: { query?: never; header?: never; path: Path; cookie?: never };
  requestBody?: never;
}
interface OperationWithBody<Path, Answer, Status extends number, Body> extends Answers<Answer, Status> {
  parameters: { query?: never; header?: never; path: Path; cookie?: never };
  requestBody: { content: { 'application/json': Body } };
}
interface PathItem<Get, Post> {
  parameters: { query?: never; header?: never; path?: never; cookie?: never };
  get: Get;
  put?: never;
  post: Post;
  delete?: never;
}
type ChangeAnswer = Operation<SchedulePath, Schedule, 200>;

interface SchedulePaths {
  '/v1/orgs/{orgId}/projects/{projectId}/schedules': PathItem<Operation<ProjectPath, { data: Schedule[] }, 200>, never>;
  '/v1/orgs/{orgId}/projects/{projectId}/schedules/{id}/pause': PathItem<never, ChangeAnswer>;
  '/v1/orgs/{orgId}/projects/{projectId}/schedules/{id}/resume': PathItem<never, ChangeAnswer>;
  '/v1/orgs/{orgId}/projects/{projectId}/schedules/{id}/trigger': PathItem<never, Operation<SchedulePath, { invocationId: string }, 202>>;
  '/v1/orgs/{orgId}/projects/{projectId}/schedules/{id}/backfill': PathItem<never, OperationWithBody<SchedulePath, { count: number }, 202, { from: string; to: string }>>;
}

/** The same client (address, token, fetch) seen with the schedules routes typed. */
const schedulesOf = (client: RunlineClient) => client as unknown as Client<SchedulePaths>;

export const listSchedules =
  (orgId: string, projectId: string): ApiCall<{ data: Schedule[] }> =>
  (client) =>
    schedulesOf(client).GET('/v1/orgs/{orgId}/projects/{projectId}/schedules', { params: { path: { orgId, projectId } } });

export const pauseSchedule =
  (orgId: string, projectId: string, id: string): ApiCall<Schedule> =>
  (client) =>
    schedulesOf(client).POST('/v1/orgs/{orgId}/projects/{projectId}/schedules/{id}/pause', { params: { path: { orgId, projectId, id } } });

export const resumeSchedule =
  (orgId: string, projectId: string, id: string): ApiCall<Schedule> =>
  (client) =>
    schedulesOf(client).POST('/v1/orgs/{orgId}/projects/{projectId}/schedules/{id}/resume', { params: { path: { orgId, projectId, id } } });

/** One run now: a fire like the others (trigger source SCHEDULE), whatever the overlap policy. */
export const triggerSchedule =
  (orgId: string, projectId: string, id: string): ApiCall<{ invocationId: string }> =>
  (client) =>
    schedulesOf(client).POST('/v1/orgs/{orgId}/projects/{projectId}/schedules/{id}/trigger', { params: { path: { orgId, projectId, id } } });

/** One run per fire time in [from, to) (ISO 8601), at most 1,000. */
export const backfillSchedule =
  (orgId: string, projectId: string, id: string, range: { from: string; to: string }): ApiCall<{ count: number }> =>
  (client) =>
    schedulesOf(client).POST('/v1/orgs/{orgId}/projects/{projectId}/schedules/{id}/backfill', { params: { path: { orgId, projectId, id } }, body: range });
