import { CreateOutboxAndInbox1763700000000, IndexInboxProcessedAt1763700000900 } from '@runline/db';
import type { ServiceDefinition } from '@runline/runtime';
import { InvocationModule } from './invocation.module.js';
import { CreateInvocationTables1763700000101 } from './migrations/1763700000101-create-invocation-tables.js';
import { CreateRunTables1763700000102 } from './migrations/1763700000102-create-run-tables.js';
import { KeepDefinitionKeyOrder1763700000103 } from './migrations/1763700000103-keep-definition-key-order.js';
import { AddWaitingJob1763700000104 } from './migrations/1763700000104-add-waiting-job.js';
import { CreateCallbackAttempts1763700000110 } from './migrations/1763700000110-create-callback-attempts.js';
import { CreateUsageCounters1763700000130 } from './migrations/1763700000130-create-usage-counters.js';
import { AddConfigVersions1763700000140 } from './migrations/1763700000140-add-config-versions.js';
import { IndexRunLogs1763700000175 } from './migrations/1763700000175-index-run-logs.js';
import { AddBotSessionTurns1763700000180 } from './migrations/1763700000180-add-bot-session-turns.js';
import { AddFlowControl1763700000320 } from './migrations/1763700000320-add-flow-control.js';
import { AddStartQueue1763700000330 } from './migrations/1763700000330-add-start-queue.js';

export const invocationService: ServiceDefinition = {
  name: 'invocation',
  schema: 'invocation',
  module: InvocationModule,
  migrations: [
    CreateOutboxAndInbox1763700000000,
    CreateInvocationTables1763700000101,
    CreateRunTables1763700000102,
    KeepDefinitionKeyOrder1763700000103,
    AddWaitingJob1763700000104,
    CreateCallbackAttempts1763700000110,
    CreateUsageCounters1763700000130,
    AddConfigVersions1763700000140,
    IndexRunLogs1763700000175,
    AddBotSessionTurns1763700000180,
    AddFlowControl1763700000320,
    AddStartQueue1763700000330,
    IndexInboxProcessedAt1763700000900,
  ],
};
