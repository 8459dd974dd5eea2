import { CopyButton } from './copy-button.js';

/**
 * A secret the API shows only in this answer (an API token, a hook's secret): the value, a
 * copy button, and a plain warning that it will not be shown again.
 */
export function ShownOnce({ title, value, what, onDone }: { title: string; value: string; what: string; onDone: () => void }) {
  return (
    <section className="shown-once" aria-label={title}>
      <h2>{title}</h2>
      <p>
        <strong>Copy the {what} now: it will not be shown again.</strong> Runline keeps only a hash of it; if it is lost, make a new one.
      </p>
      <pre className="snippet">
        <code data-testid="shown-once-value">{value}</code>
      </pre>
      <div className="actions">
        <CopyButton text={value} label={`Copy the ${what}`} />
        <button type="button" className="button button-small" onClick={onDone}>
          I have copied it
        </button>
      </div>
    </section>
  );
}
