import { createRunlineClient, type RunlineClient } from '@runline/api-client';
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { readClaims, rememberOidcSignIn, signedInWithOidc, storedToken, storeToken, takeSignInErrorFromFragment, takeTokenFromFragment } from './session-storage.js';

export interface Session {
  /** The console JWT, or null when signed out. */
  token: string | null;
  /** The signed-in user's id (the JWT's `sub`). */
  userId: string | null;
  /** Why the last session ended, shown on the sign-in page (an expired token, a sign-out). */
  notice: string | null;
  client: RunlineClient | null;
  signIn(token: string): void;
  /**
   * Forgets the token. `endProviderSession` (the user's own sign-out) also ends the identity
   * provider's session when this tab signed in through it; an expired token does not.
   */
  signOut(notice?: string, options?: { endProviderSession?: boolean }): void;
}

const SessionContext = createContext<Session | null>(null);

function initialToken(): string | null {
  const fromFragment = takeTokenFromFragment();
  if (fromFragment) {
    storeToken(fromFragment);
    return fromFragment;
  }
  return storedToken();
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [token, setToken] = useState<string | null>(initialToken);
  const [notice, setNotice] = useState<string | null>(takeSignInErrorFromFragment);

  const signIn = useCallback((next: string) => {
    storeToken(next);
    setNotice(null);
    setToken(next);
  }, []);
  const signOut = useCallback((why?: string, options?: { endProviderSession?: boolean }) => {
    storeToken(null);
    if (options?.endProviderSession && signedInWithOidc()) {
      rememberOidcSignIn(false);
      window.location.assign('/console/oidc/logout');
      return;
    }
    setNotice(why ?? null);
    setToken(null);
  }, []);

  const session = useMemo<Session>(
    () => ({
      token,
      userId: token ? (readClaims(token)?.sub ?? null) : null,
      notice,
      client: token ? createRunlineClient(window.location.origin, token) : null,
      signIn,
      signOut,
    }),
    [token, notice, signIn, signOut],
  );
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}
