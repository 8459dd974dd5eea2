import { useState, type FormEvent } from 'react';
import type { ApiError } from '../../api/api-error.js';
import { useApiCall, useResource } from '../../api/use-api.js';
import { ConfirmAction } from '../../components/confirm-action.js';
import { CopyButton } from '../../components/copy-button.js';
import { DataTable, EmptyState } from '../../components/data-table.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { Loading } from '../../components/loading.js';
import { Time } from '../../components/time-display.js';
import { StateBadge } from './inbound-hooks.js';

type Provider = 'stripe' | 'shopify' | 'github';
interface CredentialField {
  key: string;
  label: string;
  secret: boolean;
  optional?: boolean;
  placeholder?: string;
}
/** Each provider's credentials (sealed at rest, never shown again) and an example of its events. */
const PROVIDERS: Record<Provider, { name: string; events: string; fields: CredentialField[] }> = {
  stripe: { name: 'Stripe (payments)', events: 'payment_intent.succeeded, charge.refunded', fields: [{ key: 'secretKey', label: 'Secret key', secret: true, placeholder: 'sk_live_…' }] },
  shopify: {
    name: 'Shopify (commerce)',
    events: 'orders/create, orders/paid',
    fields: [
      { key: 'storeDomain', label: 'Store domain', secret: false, placeholder: 'my-shop.myshopify.com' },
      { key: 'accessToken', label: 'Admin API access token', secret: true },
      { key: 'apiSecret', label: 'API secret (verifies deliveries)', secret: true },
    ],
  },
  github: {
    name: 'GitHub (code hosting)',
    events: 'push, pull_request',
    fields: [
      { key: 'token', label: 'Token (may manage the repository’s hooks)', secret: true },
      { key: 'repository', label: 'Repository (owner/repo)', secret: false, placeholder: 'octo-org/shop' },
      { key: 'webhookSecret', label: 'Webhook secret (optional; made for you when empty)', secret: true, optional: true },
    ],
  },
};

/** Managed provider subscriptions: create, list with status and failure reason, retry a FAILED one, revoke. */
export function ProviderSubscriptions({ orgId, projectId }: { orgId: string; projectId: string }) {
  const subscriptions = useResource(
    (client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/webhook-subscriptions', { params: { path: { orgId, projectId } } }),
    [orgId, projectId],
  );
  const call = useApiCall();
  const [provider, setProvider] = useState<Provider>('stripe');
  const [events, setEvents] = useState('');
  const [credentials, setCredentials] = useState<Record<string, string>>({});
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const [rowError, setRowError] = useState<{ id: string; action: string; error: ApiError }>();
  const [working, setWorking] = useState<string>();
  const spec = PROVIDERS[provider];

  async function create(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const chosen = Object.fromEntries(spec.fields.filter((field) => (credentials[field.key] ?? '') !== '').map((field) => [field.key, credentials[field.key]!.trim()]));
      await call((client) =>
        client.POST('/v1/orgs/{orgId}/projects/{projectId}/webhook-subscriptions', {
          params: { path: { orgId, projectId } },
          body: { provider, events, credentials: chosen as Record<string, never> },
        }),
      );
      setEvents('');
      setCredentials({});
      subscriptions.reload();
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setBusy(false);
    }
  }

  async function act(id: string, action: 'retry' | 'revoke') {
    setWorking(id);
    setRowError(undefined);
    try {
      if (action === 'retry')
        await call((client) => client.POST('/v1/orgs/{orgId}/projects/{projectId}/webhook-subscriptions/{subscriptionId}/retry', { params: { path: { orgId, projectId, subscriptionId: id } } }));
      else await call((client) => client.DELETE('/v1/orgs/{orgId}/projects/{projectId}/webhook-subscriptions/{subscriptionId}', { params: { path: { orgId, projectId, subscriptionId: id } } }));
      subscriptions.reload();
    } catch (caught) {
      setRowError({ id, action: action === 'retry' ? 'Retrying' : 'Revoking', error: caught as ApiError });
      subscriptions.reload();
    } finally {
      setWorking(undefined);
    }
  }

  const rows = subscriptions.data?.data ?? [];
  return (
    <section aria-labelledby="subscriptions-title">
      <h2 id="subscriptions-title">Provider subscriptions</h2>
      <p className="muted">Runline creates the webhook at the provider for you, verifies each delivery with the provider’s own signature, and starts a run for each subscribed event.</p>
      <form className="card" onSubmit={(event) => void create(event)} aria-labelledby="new-subscription-title">
        <h3 id="new-subscription-title">Subscribe to a provider</h3>
        <div className="form-grid">
          <label>
            Provider
            <select
              value={provider}
              onChange={(event) => {
                setProvider(event.target.value as Provider);
                setCredentials({});
              }}
            >
              {(Object.keys(PROVIDERS) as Provider[]).map((key) => (
                <option key={key} value={key}>
                  {PROVIDERS[key].name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Events (comma-separated)
            <input value={events} onChange={(event) => setEvents(event.target.value)} required placeholder={spec.events} />
          </label>
          {spec.fields.map((field) => (
            <label key={`${provider}-${field.key}`}>
              {field.label}
              <input
                type={field.secret ? 'password' : 'text'}
                autoComplete="off"
                required={!field.optional}
                value={credentials[field.key] ?? ''}
                placeholder={field.placeholder}
                onChange={(event) => setCredentials({ ...credentials, [field.key]: event.target.value })}
              />
            </label>
          ))}
        </div>
        <p className="field-help">Credentials are sealed at rest and never shown again.</p>
        <ErrorBanner error={error} action="Subscribing" />
        <div className="actions">
          <button type="submit" className="button button-primary" disabled={busy}>
            {busy ? 'Subscribing…' : 'Subscribe'}
          </button>
        </div>
      </form>
      <ErrorBanner error={subscriptions.error} action="Loading the subscriptions" />
      {subscriptions.loading && !subscriptions.data && <Loading what="subscriptions" />}
      {subscriptions.data && (
        <DataTable
          rows={rows}
          rowKey={(subscription) => subscription.id}
          caption="Provider subscriptions"
          narrow="labelled-cards"
          empty={
            <EmptyState title="No provider subscriptions.">
              Subscribe to Stripe, Shopify or GitHub events above and each event starts a run; there is no webhook to set up by hand.
            </EmptyState>
          }
          columns={[
            {
              header: 'Provider and events',
              className: 'cell-wrap',
              cell: (subscription) => (
                <>
                  <strong>{subscription.provider}</strong>
                  <div className="muted">{subscription.events.join(', ')}</div>
                </>
              ),
            },
            {
              header: 'Status',
              cell: (subscription) => (
                <>
                  <StateBadge status={subscription.status} />
                  {subscription.failureReason && <div className="error-cell">{subscription.failureReason}</div>}
                </>
              ),
            },
            {
              header: 'Endpoint',
              className: 'cell-wrap',
              cell: (subscription) => (
                <>
                  <code>{subscription.endpoint}</code> <CopyButton text={subscription.endpoint} label="Copy endpoint" />
                </>
              ),
            },
            { header: 'Provider id', className: 'cell-wrap mono', cell: (subscription) => subscription.providerId ?? '—' },
            { header: 'Created', cell: (subscription) => <Time value={subscription.createdAt} /> },
            {
              header: 'Actions',
              hideHeader: true,
              className: 'row-links',
              cell: (subscription) => (
                <>
                  {subscription.status === 'FAILED' && (
                    <button type="button" className="button button-small" disabled={working === subscription.id} onClick={() => void act(subscription.id, 'retry')} aria-label={`Retry the ${subscription.provider} subscription`}>
                      Retry
                    </button>
                  )}{' '}
                  {subscription.status !== 'REVOKED' && (
                    <ConfirmAction
                      label="Revoke"
                      question={`Revoke this ${subscription.provider} subscription? The webhook is removed at ${subscription.provider} and its endpoint answers 410.`}
                      confirmLabel="Yes, revoke it"
                      busy={working === subscription.id}
                      onConfirm={() => act(subscription.id, 'revoke')}
                    />
                  )}
                  {rowError?.id === subscription.id && <ErrorBanner error={rowError.error} action={rowError.action} />}
                </>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}
