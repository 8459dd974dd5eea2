/** What the launcher needs to run the webhook service in one process with the others. */
export { webhookService } from './webhook.service.js';
