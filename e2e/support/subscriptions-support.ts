/** A managed webhook subscription as the console routes answer it (DESIGN section 9). */
export interface Subscription {
  id: string;
  provider: string;
  events: string[];
  status: 'ACTIVE' | 'FAILED' | 'REVOKED';
  endpoint: string;
  providerId: string | null;
  failureReason: string | null;
  createdAt: string;
}

/** No secret in any answer, any log line, or in clear in the stored subscriptions (they are sealed at rest). */
export function expectSecretsKeptOut(secrets: readonly string[], places: { answers: string; logs: string; stored: string }): void {
  for (const secret of secrets) {
    expect(places.answers.includes(secret)).toBe(false);
    expect(places.logs.includes(secret)).toBe(false);
    expect(places.stored.includes(secret)).toBe(false);
  }
}
