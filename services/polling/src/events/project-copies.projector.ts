import { PROJECT_CHANGE_SUBJECTS } from '@runline/contracts';
import { projectorOf } from '@runline/runtime';
import { ProjectCopies } from './project-copies.js';

/**
 * Gateway events from JetStream, applied to the project copies: every project change, no
 * organization (the poller keeps none). Most arrive here a second time (the gateway hands each
 * change over first, UpdateProjectCopyHandler), and the inbox makes that delivery a no-op.
 */
export class ProjectCopiesProjector extends projectorOf(ProjectCopies, PROJECT_CHANGE_SUBJECTS) {}
