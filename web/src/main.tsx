import { Provider } from '@urql/preact';
import { render } from 'preact';
import { useEffect, useLayoutEffect, useMemo } from 'preact/hooks';
import { Shell } from './components/Shell.tsx';
import { useCredential } from './lib/auth.ts';
import { createGraphqlClient } from './lib/client.ts';
import { navigate, useSegment } from './lib/router.ts';
import { routesFor } from './pages/routes.ts';
import { SignIn } from './pages/SignIn.tsx';
import './styles.css';

function App() {
  const credential = useCredential();
  const segment = useSegment();
  // One client per credential: nothing fetched for one caller is shown to the next.
  const client = useMemo(() => (credential ? createGraphqlClient() : undefined), [credential]);
  const routes = credential ? routesFor(credential.kind) : [];
  const route = routes.find((candidate) => candidate.segment === segment) ?? routes[0];
  // A path with no page of this caller's (the bare /dashboard/ after signing in) is redirected to the first one:
  // in place, so Back does not return to it, and before the page is painted, so the address matches what shows.
  useLayoutEffect(() => {
    if (route && route.segment !== segment) navigate(route.segment, { replace: true });
  }, [route, segment]);
  useEffect(() => {
    document.title = route ? `${route.title} · Lagoon` : 'Sign in · Lagoon';
  }, [route]);
  if (!credential || !client || !route) return <SignIn />;
  const Page = route.component;
  return (
    <Provider value={client}>
      <Shell credential={credential} routes={routes} current={route.segment}>
        <Page />
      </Shell>
    </Provider>
  );
}

render(<App />, document.getElementById('app')!);
