import { GATEWAY_EVENT_SUBJECTS, PROJECT_CHANGE_SUBJECTS } from '@runline/contracts';
import { projectorOf } from '@runline/runtime';
import { GatewayCopies } from '../runs/gateway-copies.repository.js';

/**
 * Gateway events from JetStream, applied to the invocation service's copies: organizations
 * (plans, for quotas) and every project change. Most arrive a second time here: the gateway
 * hands each change over directly before answering it (StoreGatewayChangeHandler), and the inbox
 * makes this delivery a no-op then.
 */
export class GatewayCopiesProjector extends projectorOf(GatewayCopies, [
  GATEWAY_EVENT_SUBJECTS.ORGANIZATION_CREATED,
  GATEWAY_EVENT_SUBJECTS.ORGANIZATION_PLAN_CHANGED,
  ...PROJECT_CHANGE_SUBJECTS,
]) {}
