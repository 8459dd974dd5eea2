import { lazy, Suspense } from 'react';
import { Route, Routes } from 'react-router';
import { Loading } from './components/loading.js';
import { ApiAccessPage } from './pages/api-access-page.js';
import { ApiSettingsPage } from './pages/api-settings-page.js';
import { DeadLettersPage } from './pages/dead-letters-page.js';
import { DefinitionRoute } from './pages/definition/definition-route.js';
import { HealthPage } from './pages/health-page.js';
import { LogsPage } from './pages/logs-page.js';
import { NotFoundPage } from './pages/not-found-page.js';
import { OrganizationsPage } from './pages/organizations-page.js';
import { PollingTriggersPage } from './pages/polling-triggers-page.js';
import { RunPage } from './pages/run-page.js';
import { SignInPage } from './pages/sign-in-page.js';
import { TemplatesPage } from './pages/templates-page.js';
import { WebhooksPage } from './pages/webhooks-page.js';
import { Layout } from './shell/layout.js';
import { RequireSession } from './shell/require-session.js';

// Loaded when first opened: it brings cronstrue (the expressions in words), which the first
// page's JavaScript budget need not carry.
const SchedulesPage = lazy(() => import('./pages/schedules-page.js').then((module) => ({ default: module.SchedulesPage })));

/** Every page of the console; a project page lives under its organization and project. */
export function App() {
  return (
    <Routes>
      <Route path="/sign-in" element={<SignInPage />} />
      <Route
        element={
          <RequireSession>
            <Layout />
          </RequireSession>
        }
      >
        <Route index element={<OrganizationsPage />} />
        <Route path="organizations/:orgId/projects/:projectId">
          <Route index element={<HealthPage />} />
          <Route path="health" element={<HealthPage />} />
          <Route path="logs" element={<LogsPage />} />
          <Route path="runs/:invocationId" element={<RunPage />} />
          <Route path="dead-letters" element={<DeadLettersPage />} />
          <Route path="polling-triggers" element={<PollingTriggersPage />} />
          <Route
            path="schedules"
            element={
              <Suspense fallback={<Loading what="the schedules page" />}>
                <SchedulesPage />
              </Suspense>
            }
          />
          <Route path="definition" element={<DefinitionRoute />} />
          <Route path="webhooks" element={<WebhooksPage />} />
          <Route path="api-access" element={<ApiAccessPage />} />
          <Route path="api-settings" element={<ApiSettingsPage />} />
          <Route path="templates" element={<TemplatesPage />} />
        </Route>
        <Route path="*" element={<NotFoundPage />} />
      </Route>
    </Routes>
  );
}
