import { PROJECT_CHANGE_SUBJECTS } from '@runline/contracts';
import { projectorOf } from '@runline/runtime';
import { ScheduleCatalog } from './schedule-catalog.js';

/**
 * Gateway events from JetStream, applied to the schedules: every project change. Most arrive
 * here a second time (the gateway hands each change over first, ApplyScheduleChangeHandler), and
 * the inbox makes that delivery a no-op.
 */
export class ScheduleCatalogProjector extends projectorOf(ScheduleCatalog, PROJECT_CHANGE_SUBJECTS) {}
