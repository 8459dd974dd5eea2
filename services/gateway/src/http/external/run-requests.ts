import { Injectable } from '@nestjs/common';
import type { ExternalCaller } from './external-api.guard.js';

export type RunTarget = 'BOT' | 'FLOW' | 'AUTOMATION';
export type RunMode = 'SYNC' | 'ASYNC';

export interface RunRequest {
  caller: ExternalCaller;
  target: RunTarget;
  mode: RunMode;
  body: Record<string, unknown>;
  idempotencyKey?: string;
}

/** An answer to a run request: the status and the JSON body. */
export interface RunAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * Hands an accepted run request to the invocation service. The run engine and the
 * StartInvocation command arrive with the runs work (issue 3); until then a request that has
 * passed the whole pipeline is answered 501, so nothing pretends to have run. An answer, not
 * a thrown error: expected outcomes do not pay for a stack trace.
 */
@Injectable()
export class RunRequests {
  async start(_request: RunRequest): Promise<RunAnswer> {
    return { status: 501, body: { error: 'Runs are not available in this build yet' } };
  }
}
