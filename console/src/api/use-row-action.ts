import { useState } from 'react';
import type { ApiError } from './api-error.js';

export interface RowAction {
  run(id: string): Promise<void>;
  /** The row whose action is under way, for its button's busy state. */
  isBusy(id: string): boolean;
  /** The API's refusal of the last action on this row, shown in the row it concerns. */
  errorFor(id: string): ApiError | undefined;
}

/**
 * One action on the rows of a list (revoke a token, delete a template): which row is busy and
 * where a refusal is shown. `act` does the call (through `useApiCall`, which throws the API's
 * error) and whatever follows a success, such as reloading the list.
 */
export function useRowAction(act: (id: string) => Promise<unknown>): RowAction {
  const [busyId, setBusyId] = useState<string>();
  const [failure, setFailure] = useState<{ id: string; error: ApiError }>();
  return {
    async run(id) {
      setBusyId(id);
      setFailure(undefined);
      try {
        await act(id);
      } catch (caught) {
        setFailure({ id, error: caught as ApiError });
      } finally {
        setBusyId(undefined);
      }
    },
    isBusy: (id) => busyId === id,
    errorFor: (id) => (failure?.id === id ? failure.error : undefined),
  };
}
