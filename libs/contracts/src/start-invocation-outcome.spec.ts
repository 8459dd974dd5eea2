import { create } from '@bufbuild/protobuf';
import { QuotaExceededSchema, StartInvocationReplySchema } from './gen/runline/invocation/v1/commands_pb.js';
import { notStartedReason } from './start-invocation-outcome.js';

describe('notStartedReason', () => {
  it('is null when a run was recorded', () => {
    expect(notStartedReason(create(StartInvocationReplySchema, { invocationId: 'a1', status: 'FAILED' }))).toBeNull();
  });

  it('names a used-up or unverifiable quota, else the unavailable reason', () => {
    const over = create(StartInvocationReplySchema, { quotaExceeded: create(QuotaExceededSchema, { limit: 5n, used: 5n }) });
    expect(notStartedReason(over)).toBe('Monthly API call quota exceeded');
    expect(notStartedReason(create(StartInvocationReplySchema, { quotaUnavailable: true }))).toBe('Unable to validate monthly API quota');
    expect(notStartedReason(create(StartInvocationReplySchema, { unavailableReason: 'definition not here yet' }))).toBe('definition not here yet');
    expect(notStartedReason(create(StartInvocationReplySchema, {}))).toBe('The run could not be started');
  });
});
