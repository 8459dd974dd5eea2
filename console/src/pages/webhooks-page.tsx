import { useParams } from 'react-router';
import { PageHeading } from '../components/page-heading.js';
import { InboundHooks } from './webhooks/inbound-hooks.js';
import { ProviderSubscriptions } from './webhooks/provider-subscriptions.js';
import '../components/config-pages.css';

/** Inbound hooks and managed provider subscriptions of the project. */
export function WebhooksPage() {
  const { orgId = '', projectId = '' } = useParams();
  return (
    <>
      <PageHeading title="Inbound hooks and provider subscriptions" />
      <InboundHooks orgId={orgId} projectId={projectId} />
      <ProviderSubscriptions orgId={orgId} projectId={projectId} />
    </>
  );
}
