import { lazy, Suspense, useCallback, useMemo, useRef, useState } from 'react';
import { Link } from 'react-router';
import { ApiError } from '../../api/api-error.js';
import { useApiCall } from '../../api/use-api.js';
import { ConfirmAction } from '../../components/confirm-action.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { FirstRunHint } from '../../components/first-run-hint.js';
import { graphsOf, type GraphName } from '../../components/flow-graph/graph-model.js';
import { Loading } from '../../components/loading.js';
import { PageHeading } from '../../components/page-heading.js';
import { projectPath } from '../../shell/paths.js';
import { DefinitionEditor, type DefinitionEditorHandle, type SavedProblems } from './definition-editor.js';
import { nodeOfPath, pathOfPointer, SchemaIndex, type DefinitionSchemaInfo, type Problem } from './definition-schema.js';
import { DraftDiff, VersionHistory } from './definition-history.js';
import type { DefinitionReads } from './use-definition-reads.js';
import './definition-page.css';

// The graph's module starts loading with this page's, beside the page's API reads, not after them.
const flowGraphModule = import('../../components/flow-graph/flow-graph.js');
const FlowGraph = lazy(() => flowGraphModule.then((module) => ({ default: module.FlowGraph })));

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The problems of a refused save: the API's `details` (each with a JSON pointer), or its message alone. */
function problemsOfRefusal(body: unknown, message: string): Problem[] {
  const details = body && typeof body === 'object' && 'details' in body && Array.isArray(body.details) ? (body.details as Array<{ path?: unknown; message?: unknown }>) : [];
  const problems = details.filter((detail) => typeof detail.message === 'string').map((detail) => ({ path: pathOfPointer(typeof detail.path === 'string' ? detail.path : ''), message: String(detail.message) }));
  return problems.length > 0 ? problems : [{ path: [], message }];
}

/**
 * A project's definition (its reads made by definition-route.tsx, in the console's first bundle): the draft in a schema-aware JSON editor beside its graph; save (the
 * API's refusal shown where it points), draft vs published, publish behind a confirmation, the
 * version history. A project without a definition starts from the starter of its type.
 */
export function DefinitionPage({ orgId, projectId, reads }: { orgId: string; projectId: string; reads: DefinitionReads }) {
  const { project, schema, draft, published } = reads;
  const error = project.error ?? schema.error ?? draft.error ?? published.error;
  const ready = project.data && schema.data && draft.data && published.data;

  return (
    <>
      <PageHeading title={project.data ? `Definition of ${project.data.name}` : 'Definition'}>
        {project.data && <span className="tag">{project.data.type.toLowerCase()}</span>}
      </PageHeading>
      <ErrorBanner error={error} action="Reading the definition" />
      {!ready && !error && <Loading what="the definition" />}
      {ready && (
        <DefinitionWorkspace
          orgId={orgId}
          projectId={projectId}
          projectType={project.data!.type}
          schemaInfo={schema.data as unknown as DefinitionSchemaInfo}
          draft={draft.data!}
          published={published.data!}
          onSaved={() => {
            project.reload();
            draft.reload();
          }}
          onPublished={() => {
            project.reload();
            published.reload();
          }}
        />
      )}
    </>
  );
}

interface Stage {
  version: number | null;
  definition?: Record<string, unknown> | null;
}

function DefinitionWorkspace({
  orgId,
  projectId,
  projectType,
  schemaInfo,
  draft,
  published,
  onSaved,
  onPublished,
}: {
  orgId: string;
  projectId: string;
  projectType: string;
  schemaInfo: DefinitionSchemaInfo;
  draft: Stage;
  published: Stage;
  onSaved: () => void;
  onPublished: () => void;
}) {
  const call = useApiCall();
  const schema = useMemo(() => new SchemaIndex(schemaInfo), [schemaInfo]);
  const isNew = !draft.definition;
  // The text the editor starts from; afterwards the editor owns it (a reload keeps what is typed).
  const [initial] = useState(() => pretty(draft.definition ?? schemaInfo.starterDefinition));
  const [text, setText] = useState(initial);
  const [savedText, setSavedText] = useState(isNew ? null : initial);
  const [saved, setSaved] = useState<SavedProblems | null>(null);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [failure, setFailure] = useState<{ action: 'Saving the draft' | 'Publishing'; error: ApiError }>();
  const [notice, setNotice] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [historyVersion, setHistoryVersion] = useState(0);
  const editor = useRef<DefinitionEditorHandle>(null);

  const document = useMemo(() => parseOrUndefined(text), [text]);
  // The graph keeps the last text that parsed, so it does not vanish while a line is typed.
  const lastGood = useRef<unknown>(document);
  if (document !== undefined) lastGood.current = document;
  const graphs = graphsOf(lastGood.current);
  const [chosenGraph, setChosenGraph] = useState<GraphName | null>(null);
  const graph = chosenGraph && graphs.includes(chosenGraph) ? chosenGraph : (graphs[0] ?? null);
  const problemNodes = useMemo(() => new Set(problems.map((problem) => nodeOfPath(problem.path)).filter((at) => at?.graph === graph).map((at) => at!.node)), [problems, graph]);
  const unsaved = savedText !== text;
  const publishable = draft.version !== null && draft.version !== published.version;
  // The linter reports after every pass; an unchanged list must not redraw the page (and its graph).
  const onProblems = useCallback((found: Problem[]) => setProblems((previous) => (JSON.stringify(previous) === JSON.stringify(found) ? previous : found)), []);

  async function save() {
    setFailure(undefined);
    setNotice(undefined);
    if (document === undefined) {
      setFailure({ action: 'Saving the draft', error: new ApiError('The text is not valid JSON; the editor marks where', 0) });
      return;
    }
    setBusy(true);
    try {
      const answer = await call(async (client) => {
        const response = await client.PUT('/v1/orgs/{orgId}/projects/{projectId}/definition', { params: { path: { orgId, projectId } }, body: { definition: document as Record<string, never> } });
        // A refusal's `details` place each problem in the text; keep the body for them.
        if (response.response.status === 400) setSaved({ text, problems: problemsOfRefusal(response.error, (response.error as { error?: string } | undefined)?.error ?? 'Invalid definition') });
        return response;
      });
      setSaved(null);
      setSavedText(text);
      setNotice(`Saved as draft version ${answer.draftVersion}.`);
      onSaved();
    } catch (caught) {
      setFailure({ action: 'Saving the draft', error: caught as ApiError });
    } finally {
      setBusy(false);
    }
  }

  async function publish() {
    setFailure(undefined);
    setNotice(undefined);
    setBusy(true);
    try {
      const answer = await call((client) => client.POST('/v1/orgs/{orgId}/projects/{projectId}/publish', { params: { path: { orgId, projectId } } }));
      setNotice(`Published version ${answer.publishedVersion}: runs started from now on use it.`);
      setHistoryVersion((value) => value + 1);
      onPublished();
    } catch (caught) {
      setFailure({ action: 'Publishing', error: caught as ApiError });
    } finally {
      setBusy(false);
    }
  }

  const visibleProblems = problems;
  return (
    <>
      {isNew && savedText === null && (
        <div className="empty" role="note">
          <h2>Start from the starter definition</h2>
          <p>
            This project has no definition yet. The editor holds the starter for {projectType === 'AUTOMATION' ? 'an automation' : 'a chatbot'} (the demo’s): change it as you like, save it as
            a draft, then publish it. As you type, the editor offers the fields, node types and node ids that fit where the cursor is (Ctrl+Space asks for them).
          </p>
        </div>
      )}
      <div className="definition-layout">
        <section className="definition-text" aria-labelledby="draft-heading">
          <h2 id="draft-heading">
            Draft {draft.version !== null ? `(version ${draft.version})` : '(not saved yet)'} {unsaved && <span className="tag">unsaved changes</span>}
          </h2>
          <DefinitionEditor ref={editor} initial={initial} schema={schema} saved={saved} onChange={setText} onProblems={onProblems} label="Definition draft (JSON)" />
          {visibleProblems.length > 0 && (
            <div className="problems" role="region" aria-label="Problems in the draft">
              <p>
                <strong>{visibleProblems.length === 1 ? '1 problem' : `${visibleProblems.length} problems`}</strong>
                {saved && saved.text === text ? ' (the save was refused)' : ''}:
              </p>
              <ul>
                {visibleProblems.map((problem, index) => (
                  <li key={`${index}-${problem.message}`}>
                    <button type="button" className="link-button" onClick={() => editor.current?.reveal(problem)}>
                      Line {editor.current?.lineOf(problem) ?? '?'}
                    </button>
                    : {problem.message}
                  </li>
                ))}
              </ul>
            </div>
          )}
          <ErrorBanner error={failure?.error} action={failure?.action} />
          {notice && (
            <p className="notice" role="status">
              {notice}
            </p>
          )}
          <div className="actions definition-actions">
            <button type="button" className="button button-primary" disabled={busy || !unsaved} onClick={() => void save()}>
              {busy ? 'Working…' : 'Save draft'}
            </button>
            {publishable && !unsaved ? (
              <ConfirmAction
                label="Publish"
                question={`Publish draft version ${draft.version}? Runs started from now on use it${published.version !== null ? ` instead of version ${published.version}` : ''}.`}
                confirmLabel={`Publish version ${draft.version}`}
                busy={busy}
                onConfirm={publish}
              />
            ) : (
              <span className="muted">
                {unsaved ? 'Save the draft to publish it.' : draft.version === null ? 'Nothing saved yet.' : `Version ${published.version} is published; nothing new to publish.`}
              </span>
            )}
          </div>
        </section>
        <section className="definition-graph" aria-labelledby="graph-heading">
          <h2 id="graph-heading">Graph</h2>
          {graphs.length > 1 && (
            <div className="graph-tabs" role="group" aria-label="Which graph">
              {graphs.map((name) => (
                <button key={name} type="button" className="button button-small" aria-pressed={name === graph} onClick={() => setChosenGraph(name)}>
                  {name}
                </button>
              ))}
            </div>
          )}
          {graph ? (
            <Suspense fallback={<Loading what="the graph" />}>
              <FlowGraph definition={lastGood.current} graph={graph} problemNodes={problemNodes} label={`Graph of the ${graph} (draft as typed)`} />
            </Suspense>
          ) : (
            <p className="muted">No graph with nodes in the text yet.</p>
          )}
          {document === undefined && <p className="muted">The text does not parse right now; the graph shows it as it last did.</p>}
        </section>
      </div>
      {published.version !== null && (
        <section aria-labelledby="run-heading">
          <h2 id="run-heading">Run it</h2>
          <p>
            Version {published.version} is published. Runs need an API token with the trigger scope: <Link to={projectPath(orgId, projectId, 'api-access')}>create one under API access</Link>, then
            open the <Link to={projectPath(orgId, projectId, 'logs')}>logs</Link> to follow the run.
          </p>
          <FirstRunHint orgId={orgId} projectId={projectId} projectType={projectType} title="The request example" />
        </section>
      )}
      <DraftDiff draftText={text} published={published} />
      <VersionHistory orgId={orgId} projectId={projectId} publishedVersion={published.version} refresh={historyVersion} />
    </>
  );
}
