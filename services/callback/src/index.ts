/** What the launcher needs to run the callback service in one process with the others. */
export { callbackService } from './callback.service.js';
