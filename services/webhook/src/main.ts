import { runStandalone } from '@runline/runtime';
import { webhookService } from './webhook.service.js';

await runStandalone(webhookService);
