import { runStandalone } from '@runline/runtime';
import { pollingService } from './polling.service.js';

await runStandalone(pollingService);
