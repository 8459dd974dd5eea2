import { useEffect, useState } from 'react';

/** Copies `text` to the clipboard and says so (to screen readers too) for two seconds. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);

  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  }

  return (
    <button type="button" className="button button-small" onClick={() => void copy()}>
      {label}
      <span role="status" className="copy-state">
        {state === 'copied' ? ' ✓ copied' : state === 'failed' ? ' (select and copy by hand)' : ''}
      </span>
    </button>
  );
}
