import { waitPreferenceOf } from './wait-preference.js';

describe('waitPreferenceOf', () => {
  it.each([
    ['wait=5', 5],
    ['WAIT = 60', 60],
    ['respond-async, wait=10', 10],
    ['wait="3"', 3],
    [['handling=lenient', 'wait=1'], 1],
  ] as const)('reads %j as %d seconds', (header, seconds) => {
    expect(waitPreferenceOf(header as string | string[])).toBe(seconds);
  });

  it.each([undefined, '', 'respond-async', 'wait=0', 'wait=61', 'wait=-1', 'wait=1.5', 'wait=abc', 'wait=', 'wait=100'])('ignores %j', (header) => {
    expect(waitPreferenceOf(header)).toBeNull();
  });
});
