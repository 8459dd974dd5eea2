import { create, DeletePollingTriggerReplySchema, DeletePollingTriggerRequestSchema, fromBinary, POLLING_REQUEST_SUBJECTS, toBinary } from '@runline/contracts';
import { FakeServiceClient, refusalOf } from '../../test/fake-service-client.js';
import { SERVICE_UNAVAILABLE } from '../platform/service-client/service-client.js';
import { POLLING_NOT_FOUND, RemovePollingTriggerHandler } from './remove-polling-trigger.handler.js';

const DELETE = POLLING_REQUEST_SUBJECTS.DELETE_POLLING_TRIGGER;
const scope = { orgId: 'o-1', projectId: 'p-1' };
const deleted = (found: boolean) => toBinary(DeletePollingTriggerReplySchema, create(DeletePollingTriggerReplySchema, { found }));

describe('RemovePollingTriggerHandler', () => {
  it.each([[undefined], ['']])('no pollKey (%j): invalid, and the polling service is not asked', async (pollKey) => {
    const services = new FakeServiceClient();
    expect(await refusalOf(new RemovePollingTriggerHandler(services.asClient()).execute(scope, pollKey))).toBe('invalid: pollKey is required');
    expect(services.calls).toEqual([]);
  });

  it('removes the trigger of this project with that pollKey', async () => {
    const services = new FakeServiceClient().answer(DELETE, deleted(true));
    expect(await new RemovePollingTriggerHandler(services.asClient()).execute(scope, 'orders')).toEqual({ success: true });
    expect(fromBinary(DeletePollingTriggerRequestSchema, services.callsTo(DELETE)[0]!.request)).toMatchObject({ orgId: 'o-1', projectId: 'p-1', pollKey: 'orders' });
  });

  it('none such: not found; a silent polling service: unavailable', async () => {
    const missing = new FakeServiceClient().answer(DELETE, deleted(false));
    expect(await refusalOf(new RemovePollingTriggerHandler(missing.asClient()).execute(scope, 'orders'))).toBe(`not-found: ${POLLING_NOT_FOUND}`);
    const silent = new FakeServiceClient().answer(DELETE, 'silent');
    expect(await refusalOf(new RemovePollingTriggerHandler(silent.asClient()).execute(scope, 'orders'))).toBe(`unavailable: ${SERVICE_UNAVAILABLE.polling}`);
  });
});
