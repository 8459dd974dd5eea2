import { runStandalone } from '@runline/runtime';
import { invocationService } from './invocation.service.js';

await runStandalone(invocationService);
