import { InvalidDefinitionError, validateDefinition, validateSchedules, type DefinitionValidation } from '@runline/engine';

const workflow = { start: 'n1', nodes: { n1: { type: 'return', value: "{ 'ok': true }" } } };
const automationWith = (schedules: unknown) => ({ schemaVersion: 1, workflow: { ...workflow, schedules } });
const daily = { id: 'daily-report', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', payload: { report: 'daily' } };

function messagesOf(result: DefinitionValidation): string[] {
  if (result.ok) throw new Error('expected the definition to be refused, but it validated');
  return result.errors.map((error) => error.message);
}
/** The messages of an automation whose only schedule is `daily` changed by `change`. */
const problemsOf = (change: Record<string, unknown>) => messagesOf(validateDefinition('AUTOMATION', automationWith([{ ...daily, ...change }])));

describe('schedules in a definition, validated when saved (400 naming the schedule)', () => {
  it('accepts the documented schedule, an every schedule, and a definition without schedules', () => {
    const documented = {
      ...daily,
      overlap: 'SKIP',
      catchUp: 'LATEST',
      catchUpWindowSeconds: 3600,
      jitterSeconds: 0,
      startAt: null,
      endAt: null,
      enabled: true,
    };
    const every = { id: 'poll', every: '15m', cron: null, timezone: 'Europe/Berlin' };
    expect(validateDefinition('AUTOMATION', automationWith([documented, every])).ok).toBe(true);
    expect(validateDefinition('AUTOMATION', automationWith([])).ok).toBe(true);
    expect(validateDefinition('AUTOMATION', { schemaVersion: 1, workflow }).ok).toBe(true);
    expect(() => validateSchedules(automationWith([documented, every]))).not.toThrow();
  });

  it('keeps the schedules in the validated definition', () => {
    const result = validateDefinition('AUTOMATION', automationWith([daily]));
    if (!result.ok) throw new Error(result.summary);
    expect(result.definition).toMatchObject({ workflow: { schedules: [daily] } });
  });

  it.each([
    [{ cron: '0 9 * *' }, 'Schedule daily-report: cron "0 9 * *" must have 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; it has 4'],
    [{ cron: '0 0 9 * * 1-5 2030' }, 'Schedule daily-report: cron "0 0 9 * * 1-5 2030" must have 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; it has 7'],
    [{ cron: '@daily' }, 'Schedule daily-report: cron "@daily" must have 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; it has 1'],
    [{ cron: '61 9 * * *' }, 'Schedule daily-report: cron "61 9 * * *" is not valid: Invalid value for minute: 61'],
    [{ cron: '0 9 ? * *' }, 'Schedule daily-report: cron "0 9 ? * *" uses "?", which is not supported (use "*")'],
    [{ cron: '0 0 30 2 *' }, 'Schedule daily-report: cron "0 0 30 2 *" never matches a date'],
    [{ cron: 9 }, 'Schedule daily-report: cron must be a string'],
    [{ every: '15m' }, 'Schedule daily-report: set either cron or every, not both'],
    [{ cron: null }, 'Schedule daily-report: set cron (e.g. "0 9 * * 1-5") or every (e.g. "15m")'],
    [{ cron: null, every: '15 minutes' }, 'Schedule daily-report: every "15 minutes" must be a whole number followed by s, m, h or d (e.g. "30s", "15m", "2h", "1d")'],
    [{ cron: null, every: '0s' }, 'Schedule daily-report: every "0s" must be a whole number followed by s, m, h or d (e.g. "30s", "15m", "2h", "1d")'],
    [{ cron: null, every: '32d' }, 'Schedule daily-report: every "32d" is out of range (from 1s to 31d)'],
    [{ cron: null, every: '44641m' }, 'Schedule daily-report: every "44641m" is out of range (from 1s to 31d)'],
    [{ cron: null, every: 60 }, 'Schedule daily-report: every must be a string such as "30s", "15m", "2h" or "1d"'],
    [{ timezone: 'Europe/Berln' }, 'Schedule daily-report: timezone "Europe/Berln" is not an IANA time zone (e.g. "Europe/Berlin", "UTC")'],
    [{ timezone: '+01:00' }, 'Schedule daily-report: timezone "+01:00" is not an IANA time zone (e.g. "Europe/Berlin", "UTC")'],
    [{ timezone: 1 }, 'Schedule daily-report: timezone must be a string (an IANA name such as "Europe/Berlin")'],
    [{ payload: [1, 2] }, 'Schedule daily-report: payload must be a JSON object'],
    [{ overlap: 'QUEUE' }, 'Schedule daily-report: overlap must be one of SKIP, BUFFER_ONE, ALLOW (got "QUEUE")'],
    [{ catchUp: 'EVERYTHING' }, 'Schedule daily-report: catchUp must be one of NONE, LATEST, ALL (got "EVERYTHING")'],
    [{ catchUpWindowSeconds: 0 }, 'Schedule daily-report: catchUpWindowSeconds must be an integer from 1 to 604800 (7 days)'],
    [{ catchUpWindowSeconds: 604_801 }, 'Schedule daily-report: catchUpWindowSeconds must be an integer from 1 to 604800 (7 days)'],
    [{ jitterSeconds: -1 }, 'Schedule daily-report: jitterSeconds must be an integer from 0 to 3600'],
    [{ jitterSeconds: 1.5 }, 'Schedule daily-report: jitterSeconds must be an integer from 0 to 3600'],
    [{ cron: null, every: '30s', jitterSeconds: 30 }, 'Schedule daily-report: jitterSeconds (30) must be shorter than the interval (every "30s")'],
    [{ startAt: '2030-01-01 09:00' }, 'Schedule daily-report: startAt must be an ISO 8601 date-time with Z or an offset, e.g. "2030-01-01T09:00:00Z"'],
    [{ startAt: '2030-01-01T09:00:00' }, 'Schedule daily-report: startAt must be an ISO 8601 date-time with Z or an offset, e.g. "2030-01-01T09:00:00Z"'],
    [{ endAt: '2030-02-30T09:00:00Z' }, 'Schedule daily-report: endAt must be an ISO 8601 date-time with Z or an offset, e.g. "2030-01-01T09:00:00Z"'],
    [{ startAt: '2030-01-02T00:00:00Z', endAt: '2030-01-01T00:00:00Z' }, 'Schedule daily-report: startAt must be before endAt'],
    [{ startAt: '2030-01-01T01:00:00+01:00', endAt: '2030-01-01T00:00:00Z' }, 'Schedule daily-report: startAt must be before endAt'],
    [{ enabled: 'yes' }, 'Schedule daily-report: enabled must be true or false'],
    [{ crn: '0 9 * * *' }, 'Schedule daily-report: unknown field "crn" (a schedule has id, cron, every, timezone, payload, overlap, catchUp, catchUpWindowSeconds, jitterSeconds, startAt, endAt, enabled)'],
  ])('refuses %j: %s', (change, message) => {
    expect(problemsOf(change)).toEqual([message]);
  });

  it('names a schedule without a good id by its position', () => {
    const { id: _dropped, ...withoutId } = daily;
    expect(messagesOf(validateDefinition('AUTOMATION', automationWith([daily, withoutId])))).toEqual(['Schedule #2: id is required']);
    expect(messagesOf(validateDefinition('AUTOMATION', automationWith([{ ...daily, id: 'Daily Report' }])))).toEqual([
      'Schedule #1: id "Daily Report" must be 1 to 64 characters of a-z, 0-9 and "-"',
    ]);
    expect(messagesOf(validateDefinition('AUTOMATION', automationWith([{ ...daily, id: 'x'.repeat(65) }])))).toEqual([
      `Schedule #1: id "${'x'.repeat(65)}" must be 1 to 64 characters of a-z, 0-9 and "-"`,
    ]);
    expect(messagesOf(validateDefinition('AUTOMATION', automationWith(['daily'])))).toEqual(['Schedule #1: a schedule must be an object']);
  });

  it('refuses an id used twice', () => {
    expect(messagesOf(validateDefinition('AUTOMATION', automationWith([daily, { ...daily, cron: '0 18 * * *' }])))).toEqual([
      'Schedule daily-report: id "daily-report" is used by schedule #1 too; ids must be unique',
    ]);
  });

  it('allows at most 20 schedules per automation', () => {
    const schedules = (count: number) => Array.from({ length: count }, (_, index) => ({ id: `s-${index}`, every: '1h' }));
    expect(validateDefinition('AUTOMATION', automationWith(schedules(20))).ok).toBe(true);
    expect(messagesOf(validateDefinition('AUTOMATION', automationWith(schedules(21))))).toEqual(['workflow.schedules has 21 schedules; at most 20 are allowed']);
    expect(messagesOf(validateDefinition('AUTOMATION', automationWith({ daily })))).toEqual(['workflow.schedules must be an array of schedules']);
  });

  it('says it in the 400 summary, with the path of the schedule', () => {
    const result = validateDefinition('AUTOMATION', automationWith([{ ...daily, timezone: 'Mars/Olympus' }]));
    if (result.ok) throw new Error('expected a refusal');
    expect(result.summary).toBe('Invalid definition: Schedule daily-report: timezone "Mars/Olympus" is not an IANA time zone (e.g. "Europe/Berlin", "UTC")');
    expect(result.errors[0]).toMatchObject({ path: '/workflow/schedules/0', graph: 'workflow' });
  });

  it('reports every problem of every schedule', () => {
    const messages = messagesOf(validateDefinition('AUTOMATION', automationWith([{ ...daily, overlap: 'X', jitterSeconds: -1 }, { id: 'b' }])));
    expect(messages).toEqual([
      'Schedule daily-report: jitterSeconds must be an integer from 0 to 3600',
      'Schedule daily-report: overlap must be one of SKIP, BUFFER_ONE, ALLOW (got "X")',
      'Schedule b: set cron (e.g. "0 9 * * 1-5") or every (e.g. "15m")',
    ]);
  });

  describe('schedules anywhere in a chatbot definition → 400', () => {
    const bot = { start: 'hello', nodes: { hello: { type: 'end' } } };
    const flow = { start: 'n1', nodes: { n1: { type: 'end' } } };
    it.each([
      ['flow.schedules', { schemaVersion: 1, bot, flow: { ...flow, schedules: [daily] } }],
      ['flow.trigger.schedules', { schemaVersion: 1, bot, flow: { ...flow, trigger: { schedules: [daily] } } }],
      ['bot.schedules', { schemaVersion: 1, bot: { ...bot, schedules: [] } }],
      ['schedules', { schemaVersion: 1, bot, schedules: [daily] }],
      ['workflow.schedules', { schemaVersion: 1, bot, workflow: { ...workflow, schedules: [daily] } }],
    ])('%s', (field, document) => {
      const message = `a CHATBOT definition cannot have schedules ("${field}"); schedules are for automations, in workflow.schedules`;
      expect(messagesOf(validateDefinition('CHATBOT', document))).toEqual([message]);
      expect(() => validateSchedules(document)).toThrow(InvalidDefinitionError);
    });
  });

  it('points an automation with schedules in the wrong place to workflow.schedules', () => {
    expect(messagesOf(validateDefinition('AUTOMATION', { schemaVersion: 1, workflow, schedules: [daily] }))).toEqual(['schedules belong in workflow.schedules, not in "schedules"']);
    const inTrigger = { schemaVersion: 1, workflow: { ...workflow, trigger: { schedules: [daily] } } };
    expect(messagesOf(validateDefinition('AUTOMATION', inTrigger))).toEqual(['schedules belong in workflow.schedules, not in "workflow.trigger.schedules"']);
  });

  it('validateSchedules throws the definition error, each message naming the schedule', () => {
    let thrown: unknown;
    try {
      validateSchedules(automationWith([{ ...daily, cron: 'every day' }]));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidDefinitionError);
    const error = thrown as InvalidDefinitionError;
    expect(error.errors.map((item) => item.message)).toEqual([
      'Schedule daily-report: cron "every day" must have 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; it has 2',
    ]);
    expect(error.message).toBe(`Invalid definition: ${error.errors[0]!.message}`);
  });
});
