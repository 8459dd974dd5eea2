import { Duration, Time } from '../../components/time-display.js';
import type { CallbackAttemptView } from './run-types.js';

/** Each delivery attempt of the run-finished callback: when, the answer's status code, how long. */
export function CallbackAttempts({ attempts }: { attempts: CallbackAttemptView[] }) {
  if (attempts.length === 0) return <p className="muted">No callback attempts (the run has no callback URL, or it has not finished).</p>;
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Callback attempts</caption>
        <thead>
          <tr>
            <th scope="col">Attempt</th>
            <th scope="col">At</th>
            <th scope="col">Outcome</th>
            <th scope="col">Status code</th>
            <th scope="col">Took</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((attempt) => (
            <tr key={`${attempt.webhookId}-${attempt.attempt}`}>
              <td>
                {attempt.attempt}
                {attempt.final ? ' (last)' : ''}
              </td>
              <td>
                <Time value={attempt.attemptedAt} />
              </td>
              <td>{attempt.outcome.toLowerCase().replace(/_/g, ' ')}</td>
              <td>{attempt.statusCode ?? 'none'}</td>
              <td>
                <Duration ms={attempt.durationMs} />
              </td>
              <td className="error-cell">{attempt.error ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
