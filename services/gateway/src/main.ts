import { runStandalone } from '@runline/runtime';
import { gatewayService } from './gateway.service.js';

await runStandalone(gatewayService);
