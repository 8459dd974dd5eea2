import { Inject, Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { OutboundGuard } from '@runline/outbound';
import { LOGGER, SecretBox } from '@runline/runtime';
import { WebhookConfig } from '../config.js';
import { ProviderError, type ProviderAdapter, type ProviderCallContext } from '../providers/provider-adapter.js';
import { adapterFor } from '../providers/provider-registry.js';
import { withProviderRetries } from '../providers/provider-retries.js';
import { markActive, markFailed, subscriptionById, type SubscriptionRow } from './webhook-subscriptions.repository.js';

/** The budget when the gateway sends none, and the most it may ask for. */
const DEFAULT_BUDGET_MS = 25_000;
const MAX_BUDGET_MS = 120_000;
/** A try's lease outlives its budget by this much, so a slow last write still lands inside it. */
const LEASE_MARGIN_MS = 5_000;

/** Where a provider call must have ended, and until when its lease holds. */
export interface AttemptWindow {
  deadline: number;
  leaseUntil: Date;
}

export function attemptWindow(budgetMs: number, now = Date.now()): AttemptWindow {
  const budget = budgetMs > 0 ? Math.min(budgetMs, MAX_BUDGET_MS) : DEFAULT_BUDGET_MS;
  return { deadline: now + budget, leaseUntil: new Date(now + budget + LEASE_MARGIN_MS) };
}

/**
 * Talks to the providers for the subscription handlers: creates a webhook (retrying 429 and 5xx
 * with backoff within the caller's budget) and records the outcome, or removes one. Credentials
 * are opened here for the call only; the provider's message is what a failure records, never a
 * credential, and logs carry ids and messages only.
 */
@Injectable()
export class SubscriptionProvisioner {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly outbound: OutboundGuard,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(WebhookConfig) private readonly config: WebhookConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The adapter of a stored subscription and its credentials, opened and parsed again. */
  private adapterAndCredentials(row: SubscriptionRow): { adapter: ProviderAdapter; credentials: unknown } {
    const adapter = adapterFor(row.provider);
    if (!adapter) throw new ProviderError(`Provider ${row.provider} is no longer supported`, false);
    const parsed = adapter.parseCredentials(JSON.parse(this.secrets.open(row.sealed_credentials)) as unknown);
    if (!parsed.ok) throw new ProviderError(parsed.error, false);
    return { adapter, credentials: parsed.credentials };
  }

  /**
   * Creates the webhook at the provider for a subscription whose try lease (ending at
   * `window.leaseUntil`) the caller holds; the row as it ends. Once across replicas: the lease
   * (`claimAttempt`) lets one try run at a time, and only the try still holding it records its
   * outcome.
   */
  async attempt(row: SubscriptionRow, window: AttemptWindow): Promise<SubscriptionRow> {
    const manager = this.transactions.dataSource.manager;
    let created;
    let adapter: ProviderAdapter | undefined;
    let credentials: unknown;
    try {
      ({ adapter, credentials } = this.adapterAndCredentials(row));
      const using = adapter;
      created = await withProviderRetries(
        (timeoutMs) => using.create(credentials, row.endpoint, row.events, this.context(using, timeoutMs)),
        this.policy(window),
      );
    } catch (error) {
      const reason = failureReason(error);
      // A ProviderError's message is the provider's; anything else is ours to debug (never a credential: those stay in `credentials`).
      const detail = error instanceof ProviderError ? {} : { err: error };
      this.logger.warn({ subscriptionId: row.id, provider: row.provider, reason, ...detail }, 'the provider did not create the webhook');
      // A try that lost its lease (another try holds the subscription now) records nothing.
      return (await markFailed(manager, row.id, window.leaseUntil, reason)) ?? (await subscriptionById(manager, row.id)) ?? row;
    }
    const active = await markActive(manager, row.id, window.leaseUntil, created.providerId, this.secrets.seal(created.signingSecret));
    if (active) return active;
    // Revoked while the provider was creating it, or this try outlived its lease and another try
    // (on any replica) holds or made the subscription: take the new webhook away again rather
    // than leave a second one delivering. One webhook per subscription stays at the provider.
    const now = await subscriptionById(manager, row.id);
    const revoked = !now || now.status === 'REVOKED';
    this.logger.warn(
      { subscriptionId: row.id, provider: row.provider },
      revoked ? 'revoked during creation: removing the new webhook at the provider' : 'the try outlived its lease and another try took the subscription: removing the new webhook at the provider',
    );
    await this.remove({ ...row, provider_id: created.providerId }, attemptWindow(0)).catch(() => undefined);
    return revoked ? { ...row, status: 'REVOKED' } : now;
  }

  /** Removes the subscription's webhook at the provider; 'already-gone' counts as removed. Throws ProviderError. */
  async remove(row: SubscriptionRow, window: AttemptWindow): Promise<'removed' | 'already-gone'> {
    if (!row.provider_id) return 'already-gone';
    const { adapter, credentials } = this.adapterAndCredentials(row);
    const providerId = row.provider_id;
    return withProviderRetries((timeoutMs) => adapter.remove(credentials, providerId, this.context(adapter, timeoutMs)), this.policy(window));
  }

  private policy(window: AttemptWindow) {
    return {
      maxAttempts: this.config.WEBHOOK_PROVIDER_MAX_ATTEMPTS,
      baseBackoffMs: this.config.WEBHOOK_PROVIDER_BACKOFF_MS,
      attemptTimeoutMs: this.config.WEBHOOK_PROVIDER_TIMEOUT_MS,
      deadline: window.deadline,
    };
  }

  private context(adapter: ProviderAdapter, timeoutMs: number): ProviderCallContext {
    const apiBaseUrl = adapter.provider === 'stripe' ? this.config.STRIPE_API_URL : adapter.provider === 'github' ? this.config.GITHUB_API_URL : null;
    const apiVersion = adapter.provider === 'shopify' ? { apiVersion: this.config.SHOPIFY_API_VERSION } : {};
    return { outbound: this.outbound, apiBaseUrl, ...apiVersion, timeoutMs };
  }
}

/** The provider's own message; anything else that went wrong is not shown in detail. */
export function failureReason(error: unknown): string {
  if (error instanceof ProviderError) return error.message.slice(0, 1000);
  return 'The webhook could not be created at the provider';
}
