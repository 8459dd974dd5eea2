import { create, EVENT_TYPES, newEnvelope, ScheduleJobSchema } from '@runline/contracts';
import { InvalidCommandError, readCommandOrTerminate } from './command-reading.js';

describe('readCommandOrTerminate', () => {
  const envelope = newEnvelope({ type: EVENT_TYPES.SCHEDULE_JOB, payload: create(ScheduleJobSchema, { name: 'job' }), orgId: 'org-1' });
  const setUp = () => {
    const warnings: string[] = [];
    const message = { terminated: 0, term: async () => void message.terminated++ };
    return { warnings, message, logger: { warn: (_: unknown, text: string) => void warnings.push(text) } };
  };

  it('answers what the reader read, and settles nothing', async () => {
    const { message, logger } = setUp();
    expect(await readCommandOrTerminate(envelope, message, logger, 'ScheduleJob', () => 'read')).toBe('read');
    expect(message.terminated).toBe(0);
  });

  it('terminates a command that can never be handled, and says so', async () => {
    const { message, logger, warnings } = setUp();
    const read = () => {
      throw new InvalidCommandError('ScheduleJob job: a job needs a due time');
    };
    expect(await readCommandOrTerminate(envelope, message, logger, 'ScheduleJob', read)).toBeUndefined();
    expect([message.terminated, warnings]).toEqual([1, ['ScheduleJob refused']]);
  });

  it('throws anything else, so the command comes again', async () => {
    const { message, logger } = setUp();
    const read = () => {
      throw new Error('the database is away');
    };
    await expect(readCommandOrTerminate(envelope, message, logger, 'ScheduleJob', read)).rejects.toThrow('the database is away');
    expect(message.terminated).toBe(0);
  });
});
