import { PageHeading } from '../components/page-heading.js';

/** Placeholder: this page is being built. */
export function PollingTriggersPage() {
  return <PageHeading title="Polling triggers" />;
}
