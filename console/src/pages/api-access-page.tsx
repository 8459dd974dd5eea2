import { PageHeading } from '../components/page-heading.js';

/** Placeholder: this page is being built. */
export function ApiAccessPage() {
  return <PageHeading title="API access" />;
}
