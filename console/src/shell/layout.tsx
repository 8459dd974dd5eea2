import { useEffect, useRef } from 'react';
import { NavLink, Outlet, useLocation, useParams } from 'react-router';
import { useSession } from '../session/session-context.js';
import { PROJECT_PAGES, projectPath } from './paths.js';
import { ProjectPicker } from './project-picker.js';

/** Header (picker, who is signed in, sign-out), the project's navigation and the page. */
export function Layout() {
  const { userId, signOut } = useSession();
  const { orgId, projectId } = useParams();
  const location = useLocation();
  const page = /\/projects\/[^/]+\/([^/]+)/.exec(location.pathname)?.[1] ?? 'health';
  const inProject = Boolean(orgId && projectId);

  // After a move to another page, focus goes to the page's content, so a keyboard or screen
  // reader user starts there (as after a page load) rather than on the link they left.
  const main = useRef<HTMLElement>(null);
  const firstPage = useRef(true);
  useEffect(() => {
    if (firstPage.current) {
      firstPage.current = false;
      return;
    }
    main.current?.focus();
  }, [location.pathname]);

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="header">
        <NavLink to="/" className="brand">
          Runline <span className="brand-sub">console</span>
        </NavLink>
        {inProject && <ProjectPicker page={page === 'runs' ? 'logs' : page} />}
        <div className="header-user">
          <span className="muted" title="Signed in as">
            {userId ?? 'signed in'}
          </span>
          <button type="button" className="button button-small" onClick={() => signOut('You signed out.', { endProviderSession: true })}>
            Sign out
          </button>
        </div>
      </header>
      <div className={inProject ? 'body body-with-nav' : 'body'}>
        {inProject && (
          <nav className="project-nav" aria-label="Project">
            <ul>
              {PROJECT_PAGES.map(([segment, words]) => (
                <li key={segment}>
                  <NavLink to={projectPath(orgId!, projectId!, segment)}>{words}</NavLink>
                </li>
              ))}
            </ul>
          </nav>
        )}
        <main id="main" tabIndex={-1} ref={main}>
          <Outlet />
        </main>
      </div>
    </div>
  );
}
