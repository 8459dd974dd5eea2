/** Run statuses: the word is always shown, with an icon; colour only adds to them. */
const LOOK: Record<string, { icon: string; tone: string }> = {
  SUCCEEDED: { icon: '✓', tone: 'good' },
  FAILED: { icon: '✕', tone: 'bad' },
  TIMEOUT: { icon: '◔', tone: 'bad' },
  CANCELLED: { icon: '⊘', tone: 'muted' },
  SCHEDULED: { icon: '◷', tone: 'info' },
  QUEUED: { icon: '…', tone: 'info' },
  RUNNING: { icon: '▶', tone: 'info' },
  SUSPENDED: { icon: '‖', tone: 'warn' },
};

export const RUN_STATUSES = ['SCHEDULED', 'QUEUED', 'RUNNING', 'SUSPENDED', 'SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED'] as const;
export const FINAL_STATUSES = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

export function StatusBadge({ status }: { status: string }) {
  const look = LOOK[status] ?? { icon: '•', tone: 'muted' };
  return (
    <span className={`badge badge-${look.tone}`}>
      <span aria-hidden="true">{look.icon}</span> {status}
    </span>
  );
}
