/** What the launcher needs to run the polling service in one process with the others. */
export { pollingService } from './polling.service.js';
