import type { RunlineClient } from '@runline/api-client';
import { useCallback, useEffect, useRef, useState, type DependencyList } from 'react';
import { useSession } from '../session/session-context.js';
import { ApiError, messageOf } from './api-error.js';

/** What every call of the typed client answers. */
export interface ClientAnswer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export type ApiCall<T> = (client: RunlineClient) => Promise<ClientAnswer<T>>;

export const EXPIRED_NOTICE = 'Your sign-in has expired or is no longer valid. Sign in again.';

/**
 * Runs calls of the typed client for the signed-in user: answers the data of a success, throws
 * an ApiError with the API's message otherwise, and ends the session on a 401 (an expired or
 * revoked console JWT), which brings the user back to sign-in with a notice.
 */
export function useApiCall(): <T>(call: ApiCall<T>) => Promise<T> {
  const { client, signOut } = useSession();
  return useCallback(
    async <T,>(call: ApiCall<T>): Promise<T> => {
      if (!client) throw new ApiError('Not signed in', 401);
      let answer: ClientAnswer<T>;
      try {
        answer = await call(client);
      } catch (error) {
        throw new ApiError(`Could not reach Runline: ${(error as Error).message}`, 0);
      }
      const { response } = answer;
      if (response.ok) return answer.data as T;
      const message = messageOf(answer.error, response);
      if (response.status === 401) signOut(`${EXPIRED_NOTICE} (${message})`);
      throw new ApiError(message, response.status);
    },
    [client, signOut],
  );
}

export interface Resource<T> {
  data?: T;
  error?: ApiError;
  loading: boolean;
  /** Loads again; keeps the current data on screen until the answer arrives. */
  reload(): void;
}

/**
 * Loads `call` when `deps` change, and again every `pollMs` while the page is visible (for
 * pages that show live data). A late answer for old `deps` is dropped.
 */
export function useResource<T>(call: ApiCall<T> | null, deps: DependencyList, options: { pollMs?: number } = {}): Resource<T> {
  const run = useApiCall();
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: call !== null });
  const [version, setVersion] = useState(0);
  const callRef = useRef(call);
  callRef.current = call;

  useEffect(() => {
    const current = callRef.current;
    if (!current) {
      setState({ loading: false });
      return;
    }
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    run(current).then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState((previous) => ({ data: previous.data, error: error as ApiError, loading: false })),
    );
    return () => {
      live = false;
    };
    // The caller names what its call depends on (deps), as with useEffect.
  }, [...deps, version, run]);

  useEffect(() => {
    if (!options.pollMs) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') setVersion((value) => value + 1);
    }, options.pollMs);
    return () => clearInterval(timer);
  }, [options.pollMs]);

  const reload = useCallback(() => setVersion((value) => value + 1), []);
  return { ...state, reload };
}
