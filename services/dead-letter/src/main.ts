import { runStandalone } from '@runline/runtime';
import { deadLetterService } from './dead-letter.service.js';

await runStandalone(deadLetterService);
