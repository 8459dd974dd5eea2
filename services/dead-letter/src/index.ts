/** What the launcher needs to run the dead-letter service in one process with the others. */
export { deadLetterService } from './dead-letter.service.js';
