import { PageHeading } from '../components/page-heading.js';

/** Placeholder: this page is being built. */
export function DeadLettersPage() {
  return <PageHeading title="Dead letters" />;
}
