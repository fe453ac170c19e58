import { lazy, Suspense, type ReactNode } from "react";
import { Navigate, Route, Routes } from "react-router";
import { Layout } from "./components/Layout";
import { RequireAuth } from "./auth/RequireAuth";
import { Loading } from "./components/Loading";
import { ComparePage } from "./preload";

// Every page is its own chunk (React.lazy) so the initial JavaScript stays small:
// the shell (router, query client, auth, layout) loads first, a page when it is opened.
const SignIn = lazy(() => import("./pages/signin/SignIn"));
const Home = lazy(() => import("./pages/home/Home"));
const NotFound = lazy(() => import("./pages/home/NotFound"));
const AcceptInvitation = lazy(() => import("./pages/invitations/Accept"));
const ResetPassword = lazy(() => import("./pages/reset/ResetPassword"));

// C2 (console-app) pages.
const Traces = lazy(() => import("./pages/traces/Traces"));
const TraceView = lazy(() => import("./pages/traces/TraceView"));
const Sessions = lazy(() => import("./pages/sessions/Sessions"));
const SessionView = lazy(() => import("./pages/sessions/SessionView"));
const Analytics = lazy(() => import("./pages/analytics/Analytics"));
const Queues = lazy(() => import("./pages/queues/Queues"));
const QueueView = lazy(() => import("./pages/queues/QueueView"));
const SettingsKeys = lazy(() => import("./pages/settings/Keys"));
const SettingsSecrets = lazy(() => import("./pages/settings/Secrets"));
const SettingsMembers = lazy(() => import("./pages/settings/Members"));
const SettingsInvitations = lazy(() => import("./pages/settings/Invitations"));
const SettingsAudit = lazy(() => import("./pages/settings/Audit"));
const SettingsStructure = lazy(() => import("./pages/settings/Structure"));

// C3 (console-pages) pages.
const Testsets = lazy(() => import("./pages/testsets/TestsetsPage"));
const TestsetView = lazy(() => import("./pages/testsets/TestsetPage"));
const Apps = lazy(() => import("./pages/apps/AppsPage"));
const AppView = lazy(() => import("./pages/apps/AppPage"));
const Playground = lazy(() => import("./pages/apps/Playground"));
const Evaluators = lazy(() => import("./pages/evaluators/EvaluatorsPage"));
const EvaluatorView = lazy(() => import("./pages/evaluators/EvaluatorPage"));
const Evaluations = lazy(() => import("./pages/evaluations/EvaluationsPage"));
const EvaluationView = lazy(() => import("./pages/evaluations/EvaluationPage"));
const EvaluationsCompare = ComparePage; // preloaded (preload.ts)

function page(el: ReactNode) {
  return <Suspense fallback={<Loading />}>{el}</Suspense>;
}

export function AppRoutes() {
  return (
    <Routes>
      <Route path="/signin" element={page(<SignIn />)} />
      <Route path="/invitations/accept" element={page(<AcceptInvitation />)} />
      <Route path="/reset-password" element={page(<ResetPassword />)} />
      <Route
        element={
          <RequireAuth>
            <Layout />
          </RequireAuth>
        }
      >
        <Route index element={page(<Home />)} />
        <Route path="traces" element={page(<Traces />)} />
        <Route path="traces/:traceId" element={page(<TraceView />)} />
        <Route path="sessions" element={page(<Sessions />)} />
        <Route path="sessions/:sessionId" element={page(<SessionView />)} />
        <Route path="analytics" element={page(<Analytics />)} />
        <Route path="queues" element={page(<Queues />)} />
        <Route path="queues/:queueId" element={page(<QueueView />)} />
        <Route path="settings" element={<Navigate to="/settings/keys" replace />} />
        <Route path="settings/keys" element={page(<SettingsKeys />)} />
        <Route path="settings/secrets" element={page(<SettingsSecrets />)} />
        <Route path="settings/members" element={page(<SettingsMembers />)} />
        <Route path="settings/invitations" element={page(<SettingsInvitations />)} />
        <Route path="settings/audit" element={page(<SettingsAudit />)} />
        <Route path="settings/projects" element={page(<SettingsStructure />)} />

        <Route path="testsets" element={page(<Testsets />)} />
        <Route path="testsets/:id" element={page(<TestsetView />)} />
        <Route path="apps" element={page(<Apps />)} />
        <Route path="apps/:id" element={page(<AppView />)} />
        <Route path="playground" element={page(<Playground />)} />
        <Route path="evaluators" element={page(<Evaluators />)} />
        <Route path="evaluators/:id" element={page(<EvaluatorView />)} />
        <Route path="evaluations" element={page(<Evaluations />)} />
        <Route path="evaluations/compare" element={page(<EvaluationsCompare />)} />
        <Route path="evaluations/:id" element={page(<EvaluationView />)} />
        <Route path="*" element={page(<NotFound />)} />
      </Route>
    </Routes>
  );
}
