import { useEffect, useState, type FormEvent } from 'react';
import { Navigate, useLocation } from 'react-router';
import { PageHeading } from '../components/page-heading.js';
import { readClaims, rememberOidcSignIn } from '../session/session-storage.js';
import { useSession } from '../session/session-context.js';

/** Whether the gateway offers OpenID Connect sign-in (`/console/config.json`; absent = no). */
function useOidcOffered(): boolean {
  const [offered, setOffered] = useState(false);
  useEffect(() => {
    let live = true;
    fetch('/console/config.json', { headers: { accept: 'application/json' } })
      .then((response) => (response.ok ? (response.json() as Promise<{ oidc?: unknown }>) : null))
      .then((config) => live && setOffered(config?.oidc === true))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  return offered;
}

export function SignInPage() {
  const { token, notice, signIn } = useSession();
  const location = useLocation();
  const from = (location.state as { from?: string } | null)?.from ?? '/';
  const oidc = useOidcOffered();
  const [pasted, setPasted] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  if (token) return <Navigate to={from} replace />;

  function submit(event: FormEvent) {
    event.preventDefault();
    const value = pasted.trim().replace(/^Bearer\s+/i, '');
    if (!value) return setProblem('Paste a console token first.');
    const claims = readClaims(value);
    if (!claims) return setProblem('That is not a console token (a JWT has three parts separated by dots). API tokens (rl_ext_…) do not open the console.');
    if (claims.exp && claims.exp * 1000 < Date.now()) return setProblem('That token has expired. Ask for a new one.');
    signIn(value);
  }

  return (
    <main id="main" className="sign-in">
      <div className="sign-in-card">
        <p className="brand">
          Runline <span className="brand-sub">console</span>
        </p>
        <PageHeading title="Sign in" />
        {notice && (
          <p className="notice" role="status">
            {notice}
          </p>
        )}
        {oidc && (
          <p>
            <a className="button button-primary" href="/console/oidc/login" onClick={() => rememberOidcSignIn(true)}>
              Sign in with your identity provider
            </a>
          </p>
        )}
        <form onSubmit={submit} noValidate>
          <label htmlFor="token">Console token (JWT)</label>
          <textarea
            id="token"
            name="token"
            rows={4}
            value={pasted}
            onChange={(event) => setPasted(event.target.value)}
            aria-describedby="token-help"
            aria-invalid={problem ? true : undefined}
            autoComplete="off"
            spellCheck={false}
          />
          <p id="token-help" className="muted">
            <code>npm start</code> prints a sign-in link and a <code>CONSOLE_JWT</code>. The token stays in this tab only and is forgotten when
            you close it.
          </p>
          {problem && (
            <p className="error-banner" role="alert">
              {problem}
            </p>
          )}
          <button type="submit" className="button button-primary">
            Sign in
          </button>
        </form>
      </div>
    </main>
  );
}
