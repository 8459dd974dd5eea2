import { PageHeading } from '../components/page-heading.js';

/** Placeholder: this page is being built. */
export function ApiSettingsPage() {
  return <PageHeading title="API settings" />;
}
