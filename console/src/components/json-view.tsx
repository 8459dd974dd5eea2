import { CopyButton } from './copy-button.js';

/** Objects and arrays fold (native details/summary: keyboard and screen readers for free). */
function Node({ name, value, depth }: { name: string | null; value: unknown; depth: number }) {
  const label = name === null ? null : <span className="json-key">{name}: </span>;
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item] as const) : Object.entries(value);
    const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
    if (entries.length === 0)
      return (
        <div className="json-line">
          {label}
          {open}
          {close}
        </div>
      );
    return (
      <details className="json-node" open={depth < 2}>
        <summary>
          {label}
          {open}
          <span className="json-count">
            {entries.length} {Array.isArray(value) ? (entries.length === 1 ? 'item' : 'items') : entries.length === 1 ? 'key' : 'keys'}
          </span>
        </summary>
        <div className="json-children">
          {entries.map(([key, item]) => (
            <Node key={key} name={key} value={item} depth={depth + 1} />
          ))}
        </div>
        <div className="json-line">{close}</div>
      </details>
    );
  }
  return (
    <div className="json-line">
      {label}
      <span className={`json-${value === null ? 'null' : typeof value}`}>{JSON.stringify(value)}</span>
    </div>
  );
}

/** A JSON value that folds, with a button that copies it whole. */
export function JsonView({ value, label }: { value: unknown; label: string }) {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  return (
    <section className="json-view" aria-label={label}>
      <div className="json-toolbar">
        <h3>{label}</h3>
        <CopyButton text={text} label={`Copy ${label.toLowerCase()}`} />
      </div>
      {value === undefined || value === null ? (
        <p className="muted">None.</p>
      ) : (
        <div className="json-body">
          <Node name={null} value={value} depth={0} />
        </div>
      )}
    </section>
  );
}
