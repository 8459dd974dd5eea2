import { useEffect, useState, type FormEvent } from 'react';
import { useParams } from 'react-router';
import type { Schema } from '@runline/api-client';
import type { ApiError } from '../api/api-error.js';
import { useApiCall, useResource } from '../api/use-api.js';
import { ErrorBanner } from '../components/error-banner.js';
import { Loading } from '../components/loading.js';
import { PageHeading } from '../components/page-heading.js';
import { Time } from '../components/time-display.js';
import '../components/config-pages.css';

type Settings = Schema<'ApiSettings'>;
type Enrollment = Settings['defaultEnrollmentPolicy'];
type OnError = Settings['defaultOnErrorPolicy'];

/** What the form holds: text as typed, so nothing is lost or reshaped when the API refuses it. */
interface Draft {
  externalApiEnabled: boolean;
  defaultEnrollmentPolicy: Enrollment;
  defaultOnErrorPolicy: OnError;
  defaultCallbackUrl: string;
  /** Empty keeps the current secret. */
  newSecret: string;
  removeSecret: boolean;
  rateLimitPerMinute: string;
  rateLimitWindowMs: string;
}

const draftOf = (settings: Settings): Draft => ({
  externalApiEnabled: settings.externalApiEnabled,
  defaultEnrollmentPolicy: settings.defaultEnrollmentPolicy,
  defaultOnErrorPolicy: settings.defaultOnErrorPolicy,
  defaultCallbackUrl: settings.defaultCallbackUrl ?? '',
  newSecret: '',
  removeSecret: false,
  rateLimitPerMinute: settings.rateLimitPerMinute === null ? '' : String(settings.rateLimitPerMinute),
  rateLimitWindowMs: settings.rateLimitWindowMs === null ? '' : String(settings.rateLimitWindowMs),
});

/** An empty box means "the plan's default" (null); anything else goes as typed, for the API to judge. */
const numberOrNull = (text: string) => (text.trim() === '' ? null : Number(text.trim()));

function Choice<T extends string>({ legend, name, value, options, onChange }: { legend: string; name: string; value: T; options: Array<[T, string]>; onChange: (value: T) => void }) {
  return (
    <fieldset className="plain">
      <legend>{legend}</legend>
      <div className="radio-row">
        {options.map(([option, words]) => (
          <label key={option}>
            <input type="radio" name={name} value={option} checked={value === option} onChange={() => onChange(option)} />
            <span>
              <code>{option}</code>: {words}
            </span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/** The project's API settings: the master switch, default policies, default callback, rate limits. */
export function ApiSettingsPage() {
  const { orgId = '', projectId = '' } = useParams();
  const settings = useResource((client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/api-settings', { params: { path: { orgId, projectId } } }), [orgId, projectId]);
  const call = useApiCall();
  const [saved, setSaved] = useState<Settings>();
  const [draft, setDraft] = useState<Draft>();
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState('');

  const current = saved ?? settings.data;
  useEffect(() => {
    if (settings.data && !draft) setDraft(draftOf(settings.data));
  }, [settings.data, draft]);

  const change = (patch: Partial<Draft>) => {
    setNotice('');
    setDraft((previous) => (previous ? { ...previous, ...patch } : previous));
  };

  async function save(event: FormEvent) {
    event.preventDefault();
    if (!draft) return;
    setBusy(true);
    setError(undefined);
    setNotice('');
    try {
      const body: Schema<'UpdateApiSettingsBody'> = {
        externalApiEnabled: draft.externalApiEnabled,
        defaultEnrollmentPolicy: draft.defaultEnrollmentPolicy,
        defaultOnErrorPolicy: draft.defaultOnErrorPolicy,
        defaultCallbackUrl: draft.defaultCallbackUrl.trim() === '' ? null : draft.defaultCallbackUrl.trim(),
        rateLimitPerMinute: numberOrNull(draft.rateLimitPerMinute),
        rateLimitWindowMs: numberOrNull(draft.rateLimitWindowMs),
        ...(draft.removeSecret ? { defaultCallbackSecret: null } : draft.newSecret !== '' ? { defaultCallbackSecret: draft.newSecret } : {}),
      };
      const answer = await call((client) => client.PATCH('/v1/orgs/{orgId}/projects/{projectId}/api-settings', { params: { path: { orgId, projectId } }, body }));
      setSaved(answer);
      setDraft(draftOf(answer));
      setNotice('Saved. The next request to the project follows these settings.');
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <PageHeading title="API settings" />
      <ErrorBanner error={settings.error} action="Loading the settings" />
      {settings.loading && !draft && <Loading what="settings" />}
      {draft && current && (
        <form onSubmit={(event) => void save(event)} aria-label="API settings">
          <section className="card" aria-labelledby="switch-title">
            <h2 id="switch-title">External API</h2>
            <label className="check">
              <input type="checkbox" aria-describedby="switch-help" checked={draft.externalApiEnabled} onChange={(event) => change({ externalApiEnabled: event.target.checked })} />
              Enable the external API for this project
            </label>
            <p className="field-help" id="switch-help">
              <span className="switch-state">{draft.externalApiEnabled ? 'On: ' : 'Off: '}</span>
              {draft.externalApiEnabled
                ? 'programs with a token of this project can start runs over the API, and inbound hooks start runs.'
                : 'every token call to this project is refused with 403 “External API access is disabled for this project”, hook deliveries too, and queued or scheduled runs fail when they come up. Signed-in members still see everything here.'}
            </p>
          </section>

          <section className="card" aria-labelledby="policies-title">
            <h2 id="policies-title">Default policies</h2>
            <p className="field-help">Used when neither the request nor the trigger sets one.</p>
            <Choice
              legend="Enrollment policy"
              name="enrollment"
              value={draft.defaultEnrollmentPolicy}
              options={[
                ['ONE_TIME', 'the same subject starts the automation only once'],
                ['EVERY_MATCH', 'every matching event starts a run'],
              ]}
              onChange={(value) => change({ defaultEnrollmentPolicy: value })}
            />
            <Choice
              legend="On-error policy"
              name="on-error"
              value={draft.defaultOnErrorPolicy}
              options={[
                ['ABORT', 'a failing step ends the run as FAILED'],
                ['CONTINUE', 'a failing step is recorded and the run carries on with the next one'],
              ]}
              onChange={(value) => change({ defaultOnErrorPolicy: value })}
            />
          </section>

          <section className="card" aria-labelledby="callback-title">
            <h2 id="callback-title">Default callback</h2>
            <p className="field-help">Where asynchronous runs report their outcome when the request names no webhookUrl.</p>
            <div className="form-grid">
              <label className="wide">
                Callback URL (https)
                <input type="url" value={draft.defaultCallbackUrl} onChange={(event) => change({ defaultCallbackUrl: event.target.value })} placeholder="https://example.com/runline-callback" />
              </label>
              <div className="field wide">
                <span id="secret-state">
                  Callback secret: <strong>{current.defaultCallbackSecretSet ? 'set' : 'not set'}</strong>{' '}
                  <span className="field-help">(never shown; it signs each callback)</span>
                </span>
                <label>
                  {current.defaultCallbackSecretSet ? 'Replace the secret (leave empty to keep it)' : 'Secret (optional)'}
                  <input type="password" aria-describedby="secret-state" autoComplete="new-password" value={draft.newSecret} disabled={draft.removeSecret} onChange={(event) => change({ newSecret: event.target.value })} />
                </label>
                {current.defaultCallbackSecretSet && (
                  <label className="check">
                    <input type="checkbox" checked={draft.removeSecret} onChange={(event) => change({ removeSecret: event.target.checked })} />
                    Remove the secret
                  </label>
                )}
              </div>
            </div>
          </section>

          <section className="card" aria-labelledby="limits-title">
            <h2 id="limits-title">Rate limits</h2>
            <p className="field-help">Requests per token and endpoint in each window. Leave empty to use the organization plan’s default.</p>
            <div className="form-grid">
              <label>
                Requests per window
                <input inputMode="numeric" value={draft.rateLimitPerMinute} onChange={(event) => change({ rateLimitPerMinute: event.target.value })} placeholder="plan default" />
              </label>
              <label>
                Window length (ms)
                <input inputMode="numeric" value={draft.rateLimitWindowMs} onChange={(event) => change({ rateLimitWindowMs: event.target.value })} placeholder="plan default" />
              </label>
            </div>
          </section>

          <ErrorBanner error={error} action="Saving the settings" />
          {notice && (
            <p className="outcome" role="status">
              ✓ {notice}
            </p>
          )}
          <div className="actions">
            <button type="submit" className="button button-primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save settings'}
            </button>
            <button type="button" className="button" disabled={busy} onClick={() => { setDraft(draftOf(current)); setError(undefined); setNotice(''); }}>
              Discard changes
            </button>
            <span className="muted">
              Last changed <Time value={current.updatedAt} />
            </span>
          </div>
        </form>
      )}
    </>
  );
}
