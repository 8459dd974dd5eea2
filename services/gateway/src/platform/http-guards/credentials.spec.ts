import { presentedCredential } from './credentials.js';

describe('presentedCredential', () => {
  const of = (headers: Record<string, string>) => presentedCredential({ headers });

  it('a Bearer JWT is the console’s', () => {
    expect(of({ authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln' })).toEqual({
      kind: 'console-jwt',
      value: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln',
    });
  });

  it('any other Bearer value, and x-api-key, is an API token (well formed or not)', () => {
    expect(of({ authorization: 'Bearer rl_ext_abc' })).toEqual({ kind: 'api-token', value: 'rl_ext_abc' });
    expect(of({ authorization: 'Bearer not-a-jwt' })).toEqual({ kind: 'api-token', value: 'not-a-jwt' });
    expect(of({ 'x-api-key': ' rl_ext_abc ' })).toEqual({ kind: 'api-token', value: 'rl_ext_abc' });
  });

  it('nothing, an empty x-api-key or another scheme is no credential', () => {
    expect(of({})).toBeNull();
    expect(of({ 'x-api-key': '  ' })).toBeNull();
    expect(of({ authorization: 'Basic dXNlcjpwdw==' })).toBeNull();
  });
});
