import { PageHeading } from '../components/page-heading.js';

/** Placeholder: this page is being built. */
export function TemplatesPage() {
  return <PageHeading title="Templates and request examples" />;
}
