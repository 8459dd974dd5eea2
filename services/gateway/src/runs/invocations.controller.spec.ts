import { ModifyAction } from '@runline/contracts';
import { DomainError } from '../platform/errors/domain-error.js';
import { refusalAnswer } from '../platform/http-pipeline/api-exception.filter.js';
import type { InvocationChange } from '../platform/invocations/invocation-answer.js';
import { changeOf } from './modify-invocation.handler.js';

const NOW = new Date('2030-01-01T10:00:00.000Z');
const body = (fields: Record<string, unknown>) => fields as InvocationChange;

function refusal(fields: Record<string, unknown>): { status: number; body: unknown } {
  try {
    changeOf(body(fields), NOW);
  } catch (error) {
    // Through the one mapping of refusals to HTTP, so the statuses checked are the ones answered.
    if (error instanceof DomainError) {
      const { status, body } = refusalAnswer(error);
      return { status, body };
    }
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('changeOf (PATCH /external-invocations/{id} body)', () => {
  it('cancel alone → CANCEL without a time', () => {
    expect(changeOf(body({ action: 'cancel' }), NOW)).toEqual({ action: ModifyAction.CANCEL });
  });

  it.each([
    ['runAt', { runAt: '2030-01-02T00:00:00Z' }],
    ['delaySeconds', { delaySeconds: 5 }],
    ['an unrelated field', { reason: 'changed my mind' }],
    ['a null field', { runAt: null }],
  ])('cancel with %s → 400', (_name, extra) => {
    expect(refusal({ action: 'cancel', ...extra })).toEqual({ status: 400, body: { error: 'cancel takes no fields other than action' } });
  });

  it('reschedule with runAt or delaySeconds → RESCHEDULE at that time', () => {
    expect(changeOf(body({ action: 'reschedule', runAt: '2030-01-02T00:00:00+01:00' }), NOW)).toEqual({
      action: ModifyAction.RESCHEDULE,
      runAt: new Date('2030-01-01T23:00:00.000Z'),
    });
    expect(changeOf(body({ action: 'reschedule', delaySeconds: 90 }), NOW)).toEqual({
      action: ModifyAction.RESCHEDULE,
      runAt: new Date('2030-01-01T10:01:30.000Z'),
    });
  });

  it('reschedule without a time → 400', () => {
    expect(refusal({ action: 'reschedule' })).toEqual({ status: 400, body: { error: 'reschedule needs runAt or delaySeconds' } });
  });

  it.each([
    [{ runAt: '2030-01-02T00:00:00Z', delaySeconds: 5 }, 'Provide either runAt or delaySeconds, not both'],
    [{ runAt: '2030-01-02T00:00:00' }, 'runAt must be a valid ISO date-time'],
    [{ runAt: '2029-01-02T00:00:00Z' }, 'runAt must be in the future'],
    [{ delaySeconds: 0 }, 'delaySeconds must be a positive number'],
    [{ delaySeconds: '5' }, 'delaySeconds must be a positive number'],
    [{ runAt: '2032-01-02T00:00:00Z' }, 'runAt must be at most 365 days in the future'],
  ])('reschedule %j → 400 %s', (fields, message) => {
    expect(refusal({ action: 'reschedule', ...fields })).toEqual({ status: 400, body: { error: message } });
  });

  it.each(['approve', 'reject'])('%s → 403 Unauthorized, whatever else the body holds', (action) => {
    expect(refusal({ action })).toEqual({ status: 403, body: { error: 'Unauthorized' } });
    expect(refusal({ action, runAt: 'garbage' })).toEqual({ status: 403, body: { error: 'Unauthorized' } });
  });
});
