import { HttpException } from '@nestjs/common';

/**
 * A refusal of the HTTP layer itself, before any handler runs (a body that is not JSON, or
 * that fails its DTO's validation), answered as the spec shapes errors: `{ error: message }`.
 * Handlers throw DomainError instead.
 */
export class ApiError extends HttpException {
  constructor(status: number, message: string) {
    super({ error: message }, status);
  }
}
