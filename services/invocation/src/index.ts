/** What the launcher needs to run the invocation service in one process with the others. */
export { invocationService } from './invocation.service.js';
