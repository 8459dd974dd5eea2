import { BusNoRespondersError, BusTimeoutError } from '@runline/bus';
import type { ServiceClient, ServiceName } from '../src/platform/service-client/service-client.js';
import { DomainError } from '../src/platform/errors/domain-error.js';
import { SERVICE_UNAVAILABLE } from '../src/platform/service-client/service-client.js';

/** One call a handler made to another service. */
export interface ServiceCall {
  subject: string;
  request: Uint8Array;
  /** `request`: the service named; `send`: none. */
  service?: ServiceName;
  timeoutMs?: number;
}

/** What the other service answers a call: its reply's bytes, or `silent` (no answer in time). */
export type ServiceAnswer = Uint8Array | 'silent' | 'no-responders' | Error;

/**
 * The other services, as a handler's unit test sees them: it records every call and answers
 * each subject with what the test said (the reply bytes, silence, or an error). A call on a
 * subject the test gave no answer for fails the test. Like ServiceClient, `request` turns
 * silence into the service's `unavailable` DomainError and `send` hands it on as the bus error.
 */
export class FakeServiceClient {
  readonly calls: ServiceCall[] = [];
  readonly deadlineMs = 2000;
  private readonly answers = new Map<string, Array<ServiceAnswer | ((request: Uint8Array) => ServiceAnswer)>>();

  /** Answers the next call on `subject` (queued: several answers serve several calls, the last one repeats). */
  answer(subject: string, ...answers: Array<ServiceAnswer | ((request: Uint8Array) => ServiceAnswer)>): this {
    this.answers.set(subject, [...(this.answers.get(subject) ?? []), ...answers]);
    return this;
  }

  /** The calls made on `subject`, in order. */
  callsTo(subject: string): ServiceCall[] {
    return this.calls.filter((call) => call.subject === subject);
  }

  async request(service: ServiceName, subject: string, request: Uint8Array): Promise<Uint8Array> {
    this.calls.push({ service, subject, request });
    const answer = this.next(subject, request);
    if (answer === 'silent' || answer === 'no-responders') throw new DomainError('unavailable', SERVICE_UNAVAILABLE[service]);
    if (answer instanceof Error) throw answer;
    return answer;
  }

  async send(subject: string, request: Uint8Array, timeoutMs?: number): Promise<Uint8Array> {
    this.calls.push({ subject, request, timeoutMs });
    const answer = this.next(subject, request);
    if (answer === 'silent') throw new BusTimeoutError(subject, timeoutMs ?? this.deadlineMs);
    if (answer === 'no-responders') throw new BusNoRespondersError(subject);
    if (answer instanceof Error) throw answer;
    return answer;
  }

  /** This fake where a handler expects the real client. */
  asClient(): ServiceClient {
    return this as unknown as ServiceClient;
  }

  private next(subject: string, request: Uint8Array): Exclude<ServiceAnswer, never> {
    const queue = this.answers.get(subject);
    if (!queue || queue.length === 0) throw new Error(`FakeServiceClient: no answer given for ${subject}`);
    const answer = queue.length > 1 ? queue.shift()! : queue[0]!;
    return typeof answer === 'function' ? answer(request) : answer;
  }
}

/** A logger that keeps what it was told, for handlers that log a failure. */
export function recordingLogger(): { lines: Array<{ level: string; message: string }>; logger: never } {
  const lines: Array<{ level: string; message: string }> = [];
  const at = (level: string) => (_fields: unknown, message?: string) => lines.push({ level, message: message ?? String(_fields) });
  const logger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
  return { lines, logger: logger as never };
}

/** What a handler refused with, as `kind: message`; fails when it did not refuse. */
export async function refusalOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return `${error.kind}: ${error.message}`;
    throw error;
  }
  throw new Error('expected a refusal');
}
