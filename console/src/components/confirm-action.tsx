import { useEffect, useRef, useState } from 'react';

/**
 * A destructive action behind a confirmation: the button opens an inline question that names
 * what happens, with the confirming button focused and a way back. No modal: it stays in the
 * row it is about, reads in order, and works the same at phone width.
 */
export function ConfirmAction({
  label,
  question,
  confirmLabel,
  onConfirm,
  busy = false,
}: {
  /** The button's words, e.g. "Revoke" (with what it is about in `aria-label` via `question`). */
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => void | Promise<void>;
  busy?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);

  if (!asking)
    return (
      <button type="button" className="button button-small button-danger" aria-label={`${label}: ${question}`} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <div className="confirm" role="group" aria-label={question}>
      <p className="confirm-question">{question}</p>
      <button
        ref={confirmRef}
        type="button"
        className="button button-small button-danger"
        disabled={busy}
        onClick={async () => {
          await onConfirm();
          setAsking(false);
        }}
      >
        {busy ? 'Working…' : confirmLabel}
      </button>
      <button type="button" className="button button-small" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </div>
  );
}
