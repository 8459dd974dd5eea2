/** Why an outbound request failed. */
export type OutboundErrorCode = 'REFUSED' | 'TIMEOUT' | 'TOO_LARGE' | 'NETWORK' | 'ABORTED';

/**
 * Every failure of the outbound guard. The message is safe to show a customer: it names at
 * most the host, the address and the reason. Lower-level details (a socket error, say) are kept
 * in `cause` for logs only.
 */
export class OutboundError extends Error {
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OutboundError';
  }
}

/** The URL or an address it resolves to is not allowed; nothing was sent. */
export class OutboundRefusedError extends OutboundError {
  constructor(reason: string) {
    super('REFUSED', `refused: ${reason}`);
    this.name = 'OutboundRefusedError';
  }
}
