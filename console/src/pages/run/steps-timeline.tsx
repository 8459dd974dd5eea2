import { StatusBadge } from '../../components/status-badge.js';
import { Duration, Time } from '../../components/time-display.js';
import { stepElementId } from './run-graph.js';
import type { StepView } from './run-types.js';

/** The steps in order, each with a bar as long as its share of the slowest; the slowest is named. */
export function StepsTimeline({ steps }: { steps: StepView[] }) {
  if (steps.length === 0) return <p className="muted">No steps ran yet.</p>;
  const longest = Math.max(1, ...steps.map((step) => step.durationMs ?? 0));
  // Named only when it matters: more than one step, and the slowest took 10 ms or more.
  const slowest = steps.length > 1 && longest >= 10 ? steps.findIndex((step) => (step.durationMs ?? 0) === longest) : -1;
  return (
    <ol className="timeline">
      {steps.map((step, index) => (
        <li key={`${step.nodeId}-${index}`} id={stepElementId(index)} tabIndex={-1} className={step.status === 'FAILED' ? 'step step-failed' : 'step'}>
          <div className="step-head">
            <span className="step-name">
              <span className="mono">{step.nodeId}</span> <span className="muted">({step.type})</span>
            </span>
            <StatusBadge status={step.status} />
            <span>
              <Duration ms={step.durationMs} />
              {index === slowest && <strong className="slowest"> slowest step</strong>}
            </span>
          </div>
          <div className="step-bar" aria-hidden="true">
            <span style={{ width: `${Math.max(1, ((step.durationMs ?? 0) / longest) * 100)}%` }} />
          </div>
          <div className="muted step-time">
            started <Time value={step.startedAt} />
          </div>
          {step.error && (
            <p className="step-error">
              <strong>Error in {step.nodeId}:</strong> {step.error}
            </p>
          )}
          {step.approval && (
            <p>
              {step.approval.decision.toLowerCase()} by {step.approval.decidedBy ?? 'someone'} at <Time value={step.approval.decidedAt} />
              {step.approval.comment ? `: “${step.approval.comment}”` : ''}
            </p>
          )}
        </li>
      ))}
    </ol>
  );
}
