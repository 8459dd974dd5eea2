import { useMemo, useState } from 'react';
import { useResource } from '../../api/use-api.js';
import { DataTable } from '../../components/data-table.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { Loading } from '../../components/loading.js';
import { Time } from '../../components/time-display.js';
import { foldUnchanged, lineDiff } from './line-diff.js';

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

function normalized(text: string): string {
  try {
    return pretty(JSON.parse(text));
  } catch {
    return text;
  }
}

/**
 * The draft as typed against the published version (or an older one chosen in the history):
 * changed lines with two lines of context, removed ones marked "−", added ones "+" (not by colour alone).
 */
export function DraftDiff({ draftText, published }: { draftText: string; published: { version: number | null; definition?: Record<string, unknown> | null } }) {
  const [open, setOpen] = useState(false);
  const lines = useMemo(() => (open && published.definition ? foldUnchanged(lineDiff(pretty(published.definition), normalized(draftText))) : []), [open, published.definition, draftText]);
  const changed = lines.filter((line) => line && line.kind !== 'same').length;
  return (
    <section aria-labelledby="diff-heading">
      <h2 id="diff-heading">Draft vs published</h2>
      {published.version === null || !published.definition ? (
        <p className="muted">Nothing is published yet: the whole draft is new.</p>
      ) : (
        <details className="diff" onToggle={(event) => setOpen((event.target as HTMLDetailsElement).open)}>
          <summary>Compare the draft (as typed) with published version {published.version}</summary>
          {open &&
            (changed === 0 ? (
              <p>The draft is the same as version {published.version}.</p>
            ) : (
              <>
                <p className="muted">
                  {changed} changed {changed === 1 ? 'line' : 'lines'}: “−” only in version {published.version}, “+” only in the draft.
                </p>
                <pre className="diff-lines" aria-label={`Differences between version ${published.version} and the draft`}>
                  {lines.map((line, index) =>
                    line === null ? (
                      <span key={index} className="diff-fold">
                        {'   …\n'}
                      </span>
                    ) : (
                      <span key={index} className={`diff-${line.kind}`}>
                        {line.kind === 'removed' ? '− ' : line.kind === 'added' ? '+ ' : '  '}
                        {line.text}
                        {'\n'}
                      </span>
                    ),
                  )}
                </pre>
              </>
            ))}
        </details>
      )}
    </section>
  );
}

/** The published versions, newest first: number, who published it, when. */
export function VersionHistory({ orgId, projectId, publishedVersion, refresh }: { orgId: string; projectId: string; publishedVersion: number | null; refresh: number }) {
  const history = useResource((client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/definition/versions', { params: { path: { orgId, projectId } } }), [orgId, projectId, refresh, publishedVersion]);
  return (
    <section aria-labelledby="history-heading">
      <h2 id="history-heading">Version history</h2>
      <ErrorBanner error={history.error} action="Reading the version history" />
      {!history.data && !history.error && <Loading what="the version history" />}
      {history.data && (
        <DataTable
          rows={history.data.data}
          rowKey={(row) => String(row.version)}
          caption="Published versions"
          narrow="cards"
          empty={<p className="muted">No version published yet.</p>}
          columns={[
            { header: 'Version', cell: (row) => (row.version === publishedVersion ? <strong>{`${row.version} (in use)`}</strong> : String(row.version)) },
            { header: 'Published by', cell: (row) => row.publishedBy ?? <span className="muted">not recorded</span> },
            { header: 'Published', cell: (row) => <Time value={row.publishedAt} /> },
          ]}
        />
      )}
    </section>
  );
}
