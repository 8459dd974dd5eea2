/** What the launcher needs to run the scheduler service in one process with the others. */
export { schedulerService } from './scheduler.service.js';
