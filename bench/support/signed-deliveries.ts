import { createHmac, randomUUID } from 'node:crypto';

/** One delivery to an inbound hook, signed as a sender signs it (README "Inbound webhooks"). */
export interface SignedDelivery {
  headers: Record<string, string>;
  body: string;
}

/**
 * Signs a delivery the way README "Inbound webhooks" tells a sender to, written out here rather
 * than taken from the service: `X-Runline-Signature: sha256=<hex HMAC-SHA256 of
 * "<timestamp>.<body>">`, `X-Runline-Timestamp` in Unix seconds, and a distinct
 * `X-Runline-Delivery`.
 */
export function signDelivery(secret: string, body: string, timestamp: number, deliveryId: string): SignedDelivery {
  const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return {
    headers: {
      'content-type': 'application/json',
      'x-runline-signature': `sha256=${signature}`,
      'x-runline-timestamp': String(timestamp),
      'x-runline-delivery': deliveryId,
    },
    body,
  };
}

/**
 * Deliveries signed ahead of a load run, so that the load client spends its time sending, not
 * hashing: `refill` signs `size` fresh ones (the current time, a new id each), `next` hands them
 * out once each. Should a load run take more than were signed, `next` signs on the spot and
 * counts it, so the report can say the client did extra work.
 */
export class SignedDeliveries {
  private pool: SignedDelivery[] = [];
  private index = 0;
  /** Deliveries handed out over the benchmark, and how many of them had to be signed during a load. */
  handedOut = 0;
  signedDuringLoad = 0;

  constructor(
    private readonly secret: string,
    private readonly body: string,
    private readonly size: number,
  ) {}

  /** Replaces what is left with `size` deliveries signed now; returns the seconds it took. */
  refill(): number {
    const started = performance.now();
    const timestamp = Math.floor(Date.now() / 1000);
    this.pool = Array.from({ length: this.size }, () => signDelivery(this.secret, this.body, timestamp, randomUUID()));
    this.index = 0;
    return (performance.now() - started) / 1000;
  }

  next(): SignedDelivery {
    this.handedOut++;
    const delivery = this.pool[this.index];
    if (delivery !== undefined) {
      this.pool[this.index++] = undefined as unknown as SignedDelivery;
      return delivery;
    }
    this.signedDuringLoad++;
    return signDelivery(this.secret, this.body, Math.floor(Date.now() / 1000), randomUUID());
  }
}
