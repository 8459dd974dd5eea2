import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { useNavigate, useParams, useSearchParams } from 'react-router';
import type { ApiError } from '../api/api-error.js';
import { hasMore, readPage, startPosition, type LogPosition } from '../api/merged-log-pages.js';
import { useApiCall } from '../api/use-api.js';
import { useEventStream } from '../api/use-event-stream.js';
import { useProject } from '../api/use-project.js';
import { ErrorBanner } from '../components/error-banner.js';
import { FirstRunHint } from '../components/first-run-hint.js';
import { PageHeading } from '../components/page-heading.js';
import { RunsTable, type RunRow } from '../components/runs-table.js';
import { filtersFrom, LogFilterBar, searchOf, type LogFilters } from './logs/log-filters.js';
import { runPath } from '../shell/paths.js';

/** Rows per page: the API's largest page. */
export const LOGS_PAGE_SIZE = 200;
/** The first page reads again this often while the tab is visible, when the project's stream broke. */
export const LOGS_POLL_MS = 5_000;
/** Changes that arrive together on the project's stream read the first page once. */
export const LOGS_STREAM_COALESCE_MS = 300;

type Row = RunRow & { projectId: string };

interface View {
  rows: Row[];
  /** Positions before each page shown so far; the last is the current page's. */
  stack: LogPosition<Row>[];
  after: LogPosition<Row> | null;
}

export function LogsPage() {
  const { orgId = '', projectId = '' } = useParams();
  const [search, setSearch] = useSearchParams();
  const navigate = useNavigate();
  const call = useApiCall();
  const project = useProject(orgId, projectId);
  // The controls follow the user's input at once; the address follows them (and a change of
  // the address, say Back, resets them).
  const addressKey = searchOf(filtersFrom(search)).toString();
  const [filters, setFilters] = useState(() => filtersFrom(search));
  const filterKey = searchOf(filters).toString();
  useEffect(() => {
    setFilters((current) => (searchOf(current).toString() === addressKey ? current : filtersFrom(new URLSearchParams(addressKey))));
  }, [addressKey]);

  const [view, setView] = useState<View | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<ApiError | null>(null);
  const latest = useRef(0);

  const load = useCallback(
    async (stack: LogPosition<Row>[]) => {
      const ticket = ++latest.current;
      setLoading(true);
      const { targetType, mode, triggerSource, from, to } = filtersFrom(new URLSearchParams(filterKey));
      try {
        const page = await readPage(stack[stack.length - 1]!, LOGS_PAGE_SIZE, (status, cursor, limit) =>
          call((client) =>
            client.GET('/v1/orgs/{orgId}/external-invocations/logs', {
              params: {
                path: { orgId },
                query: {
                  projectId,
                  limit,
                  ...(status ? { status } : {}),
                  ...(cursor ? { cursor } : {}),
                  ...(targetType ? { targetType } : {}),
                  ...(mode ? { mode } : {}),
                  ...(triggerSource ? { triggerSource } : {}),
                  ...(from ? { from } : {}),
                  ...(to ? { to } : {}),
                },
              },
            }),
          ),
        );
        if (ticket !== latest.current) return;
        setView({ rows: page.rows, stack, after: hasMore(page.next) ? page.next : null });
        setError(null);
      } catch (failure) {
        if (ticket === latest.current) setError(failure as ApiError);
      } finally {
        if (ticket === latest.current) setLoading(false);
      }
    },
    [call, orgId, projectId, filterKey],
  );

  // A new filter starts again from the newest run.
  useEffect(() => {
    void load([startPosition<Row>(filtersFrom(new URLSearchParams(filterKey)).statuses)]);
  }, [load, filterKey]);

  // New and changed runs: on the first page, each change on the project's stream reads it again
  // (changes close together once); it polls every few seconds only when the stream broke. Later
  // pages stay as they are.
  const onFirstPage = !view || view.stack.length === 1;
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  const reloadFirstPage = useCallback(() => {
    if (pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      void load([startPosition<Row>(filtersFrom(new URLSearchParams(filterKey)).statuses)]);
    }, LOGS_STREAM_COALESCE_MS);
  }, [load, filterKey]);
  useEffect(() => () => {
    if (pending.current) clearTimeout(pending.current);
    pending.current = null;
  }, [reloadFirstPage]);
  const stream = useEventStream(onFirstPage ? `/v1/orgs/${orgId}/projects/${projectId}/runs/events` : null, reloadFirstPage);
  useEffect(() => {
    if (!onFirstPage || stream !== 'broken') return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible' && !loading) void load([startPosition<Row>(filtersFrom(new URLSearchParams(filterKey)).statuses)]);
    }, LOGS_POLL_MS);
    return () => clearInterval(timer);
  }, [onFirstPage, load, loading, filterKey, stream]);

  function change(next: LogFilters) {
    setFilters(next);
    setSearch(searchOf(next), { replace: true });
  }

  const [query, setQuery] = useState('');
  const [searchProblem, setSearchProblem] = useState<string | ApiError | null>(null);
  async function find(event: FormEvent) {
    event.preventDefault();
    const q = query.trim();
    if (!q) return;
    setSearchProblem(null);
    try {
      const found = await call((client) => client.GET('/v1/orgs/{orgId}/external-invocations/logs', { params: { path: { orgId }, query: { q, limit: 2 } } }));
      const match = found.data[0];
      if (!match) setSearchProblem(`No run of this organization has the invocation id or idempotency key “${q}”.`);
      else navigate(runPath(orgId, match.projectId, match.invocationId));
    } catch (failure) {
      setSearchProblem(failure as ApiError);
    }
  }

  const pageNumber = view?.stack.length ?? 1;
  const empty = view && view.rows.length === 0;
  return (
    <>
      <PageHeading title={`Logs${project.data ? ` of ${project.data.name}` : ''}`} />
      <form className="search" role="search" onSubmit={(event) => void find(event)}>
        <label htmlFor="run-search">Find a run by invocation id or idempotency key</label>
        <div className="search-row">
          <input id="run-search" type="search" value={query} onChange={(event) => setQuery(event.target.value)} maxLength={128} autoComplete="off" />
          <button type="submit" className="button">
            Open run
          </button>
        </div>
        <ErrorBanner error={searchProblem} action="Finding the run" />
      </form>
      <LogFilterBar filters={filters} onChange={change} />
      <ErrorBanner error={error} action="Reading the logs" />
      <p className="muted" role="status" aria-live="polite">
        {loading && !view ? 'Loading runs…' : view ? `Page ${pageNumber}: ${view.rows.length} run${view.rows.length === 1 ? '' : 's'}${onFirstPage ? ', new runs appear by themselves' : ''}.` : ''}
      </p>
      {empty && filterKey === '' && pageNumber === 1 && <FirstRunHint orgId={orgId} projectId={projectId} projectType={project.data?.type} />}
      {empty && filterKey !== '' && <p className="empty">No runs match these filters.</p>}
      {view && view.rows.length > 0 && <RunsTable orgId={orgId} runs={view.rows} caption="Runs, newest first" />}
      {view && (pageNumber > 1 || view.after) && (
        <nav className="pager" aria-label="Pages">
          <button type="button" className="button" disabled={pageNumber === 1 || loading} onClick={() => void load(view.stack.slice(0, -1))}>
            Newer runs
          </button>
          <button type="button" className="button" disabled={!view.after || loading} onClick={() => view.after && void load([...view.stack, view.after])}>
            Older runs
          </button>
        </nav>
      )}
    </>
  );
}
