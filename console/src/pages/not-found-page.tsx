import { Link } from 'react-router';
import { PageHeading } from '../components/page-heading.js';

export function NotFoundPage() {
  return (
    <>
      <PageHeading title="Page not found" />
      <p>
        This address is not a page of the console. <Link to="/">Go to your organizations and projects</Link>.
      </p>
    </>
  );
}
