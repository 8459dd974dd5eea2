import type { ApiError } from '../api/api-error.js';

/** What the API said, where it happened; `role="alert"` reads it out as it appears. */
export function ErrorBanner({ error, action }: { error: ApiError | Error | string | undefined | null; action?: string }) {
  if (!error) return null;
  const message = typeof error === 'string' ? error : error.message;
  return (
    <div className="error-banner" role="alert">
      <strong>{action ? `${action} failed: ` : 'Error: '}</strong>
      {message}
    </div>
  );
}
