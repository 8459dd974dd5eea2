import { runStandalone } from '@runline/runtime';
import { schedulerService } from './scheduler.service.js';

await runStandalone(schedulerService);
