import { PageHeading } from '../components/page-heading.js';

/** Placeholder: this page is being built. */
export function WebhooksPage() {
  return <PageHeading title="Inbound hooks and provider subscriptions" />;
}
