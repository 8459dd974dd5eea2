import { Injectable } from '@nestjs/common';
import { ApiError } from '../api-error.js';
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

/**
 * Hands an accepted run request to the invocation service. The run engine and the
 * StartInvocation command arrive with the runs work (issue 3); until then a request that has
 * passed the whole pipeline is answered 501, so nothing pretends to have run.
 */
@Injectable()
export class RunRequests {
  async start(_request: RunRequest): Promise<never> {
    throw new ApiError(501, 'Runs are not available in this build yet');
  }
}
