import { callbackService } from '@runline/callback-service';
import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { pollingService } from '@runline/polling-service';
import { schedulerService } from '@runline/scheduler-service';
import { webhookService } from '@runline/webhook-service';
import type { ServiceDefinition } from '@runline/runtime';

/** Every service, gateway first: the order they are migrated and started in. */
export const ALL_SERVICES: readonly ServiceDefinition[] = [
  gatewayService,
  invocationService,
  schedulerService,
  pollingService,
  deadLetterService,
  callbackService,
  webhookService,
];
