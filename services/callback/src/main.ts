import { runStandalone } from '@runline/runtime';
import { callbackService } from './callback.service.js';

await runStandalone(callbackService);
