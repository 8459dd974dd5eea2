import { create, fromBinary, POLLING_REQUEST_SUBJECTS, RegisterPollingTriggerReplySchema, RegisterPollingTriggerRequestSchema, toBinary } from '@runline/contracts';
import { FakeServiceClient, refusalOf } from '../../test/fake-service-client.js';
import { SERVICE_UNAVAILABLE } from '../platform/service-client/service-client.js';
import { SavePollingTriggerHandler } from './save-polling-trigger.handler.js';

const REGISTER = POLLING_REQUEST_SUBJECTS.REGISTER_POLLING_TRIGGER;
const scope = { orgId: 'o-1', projectId: 'p-1', projectType: 'CHATBOT' as const, configVersion: 9 };
const registered = (fields: Record<string, unknown>) => toBinary(RegisterPollingTriggerReplySchema, create(RegisterPollingTriggerReplySchema, fields as never));
const trigger = { source: 'feed', pollKey: 'orders', pollEndpoint: 'https://example.com/orders' };

describe('SavePollingTriggerHandler', () => {
  it('sends the trigger with the project and its type; fields left out go as empty for the polling service’s defaults', async () => {
    const services = new FakeServiceClient().answer(REGISTER, registered({ triggerJson: '{"pollKey":"orders"}' }));
    expect(await new SavePollingTriggerHandler(services.asClient()).execute(scope, trigger)).toEqual({ data: { pollKey: 'orders' } });
    expect(fromBinary(RegisterPollingTriggerRequestSchema, services.callsTo(REGISTER)[0]!.request)).toMatchObject({
      orgId: 'o-1',
      projectId: 'p-1',
      configVersion: 9n,
      projectType: 'CHATBOT',
      ...trigger,
      dedupeField: '',
      authHeader: '',
      intervalMs: 0,
    });
  });

  it('hands on the optional fields it was given', async () => {
    const services = new FakeServiceClient().answer(REGISTER, registered({ triggerJson: '{}' }));
    await new SavePollingTriggerHandler(services.asClient()).execute(scope, { ...trigger, dedupeField: 'id', authHeader: 'Bearer x', intervalMs: 60_000 });
    expect(fromBinary(RegisterPollingTriggerRequestSchema, services.callsTo(REGISTER)[0]!.request)).toMatchObject({ dedupeField: 'id', authHeader: 'Bearer x', intervalMs: 60_000 });
  });

  it('the polling service’s refusal is invalid, with its reason; its silence is unavailable', async () => {
    const refused = new FakeServiceClient().answer(REGISTER, registered({ invalidReason: 'intervalMs must be at least 10000' }));
    expect(await refusalOf(new SavePollingTriggerHandler(refused.asClient()).execute(scope, trigger))).toBe('invalid: intervalMs must be at least 10000');
    const silent = new FakeServiceClient().answer(REGISTER, 'silent');
    expect(await refusalOf(new SavePollingTriggerHandler(silent.asClient()).execute(scope, trigger))).toBe(`unavailable: ${SERVICE_UNAVAILABLE.polling}`);
  });
});
