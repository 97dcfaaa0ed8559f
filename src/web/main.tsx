import './jitless.js';
import './styles.css';
import { StrictMode, useEffect, useMemo, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { createApi, startingKey, storeKey } from './api.js';
import { connectLive, type Live, type LiveState } from './live.js';
import { AccountPage, KeyForm } from './pages/account.js';
import { ClientPage } from './pages/client.js';
import { ClientsPage } from './pages/clients.js';
import { CreatePage } from './pages/create.js';
import { DeliveriesPage } from './pages/deliveries.js';
import { DeliveryPage } from './pages/delivery.js';
import { PaymentPage } from './pages/payment.js';
import { PaymentsPage } from './pages/payments.js';
import { RequestsPage } from './pages/requests.js';
import { Link, type Location, useLocation } from './router.js';
import { AppContext } from './ui.js';

const NAV: [string, string][] = [
  ['/payments', 'VA payments'],
  ['/clients', 'Clients'],
  ['/deliveries', 'Deliveries'],
  ['/requests', 'Requests'],
  ['/create', 'Create'],
  ['/account', 'Account'],
];

const LIVE_TEXT: Record<LiveState, string> = {
  connecting: 'Connecting…',
  connected: 'Live',
  reconnecting: 'Reconnecting…',
};

function App() {
  const [key, setKey] = useState(startingKey);
  /** The key the sandbox answered 401 to: ask for another one, as on a sandbox started with --api-key. */
  const [refused, setRefused] = useState<string | null>(null);
  const where = useLocation();
  const chooseKey = (next: string) => {
    storeKey(next);
    setRefused(null);
    setKey(next);
  };
  if (refused === key) {
    return (
      <>
        <Header where={where} live={null} />
        <main>
          <h1>VA sandbox inspector</h1>
          <p className="error-note" role="alert">
            This sandbox refuses the key <span className="mono">{key}</span>: it was started with --api-key. Give one of
            its keys.
          </p>
          <KeyForm current={null} onKey={chooseKey} />
        </main>
      </>
    );
  }
  return <Connected key={key} apiKey={key} where={where} onKey={chooseKey} onRefused={() => setRefused(key)} />;
}

/** Everything that needs the key: one API client and one live stream for the page's whole life. */
function Connected({
  apiKey,
  where,
  onKey,
  onRefused,
}: {
  apiKey: string;
  where: Location;
  onKey: (key: string) => void;
  onRefused: () => void;
}) {
  const [liveState, setLiveState] = useState<LiveState>('connecting');
  const refusedRef = useRef(onRefused);
  refusedRef.current = onRefused;
  const api = useMemo(() => createApi(apiKey, () => refusedRef.current()), [apiKey]);
  const [live, setLive] = useState<Live | null>(null);
  /** Bumped when the whole account changed under the page (an import): every `useLoad` reads again. */
  const [epoch, setEpoch] = useState(0);
  useEffect(() => {
    const connection = connectLive(api, setLiveState);
    setLive(connection);
    return () => connection.stop();
  }, [api]);
  const app = useMemo(
    () => (live ? { api, live, epoch, reloadAll: () => setEpoch((n) => n + 1) } : null),
    [api, live, epoch],
  );
  if (!app) return null;
  return (
    <AppContext.Provider value={app}>
      <Header where={where} live={liveState} apiKey={apiKey} onKey={onKey} />
      <Page where={where} onKey={onKey} />
    </AppContext.Provider>
  );
}

function Header({
  where,
  live,
  apiKey,
  onKey,
}: {
  where: Location;
  live: LiveState | null;
  apiKey?: string;
  onKey?: (key: string) => void;
}) {
  const [switching, setSwitching] = useState(false);
  return (
    <header className="top">
      <a className="skip" href="#content">
        Skip to content
      </a>
      <span className="brand">va-sandbox</span>
      <nav aria-label="Sections">
        {NAV.map(([to, text]) => (
          <Link
            key={to}
            to={to}
            aria-current={where.path.startsWith(to) || (to === '/payments' && where.path === '/') ? 'page' : undefined}
          >
            {text}
          </Link>
        ))}
      </nav>
      {live ? (
        <span className={`live live-${live}`} role="status" aria-label={`Live updates: ${LIVE_TEXT[live]}`}>
          {LIVE_TEXT[live]}
        </span>
      ) : null}
      {apiKey && onKey ? (
        <>
          <button
            type="button"
            className="small key"
            aria-expanded={switching}
            aria-label={`API key ${apiKey}: switch`}
            onClick={() => setSwitching(!switching)}
          >
            {apiKey}
          </button>
          {switching ? (
            <div className="key-panel">
              <KeyForm
                current={apiKey}
                onKey={(next) => {
                  setSwitching(false);
                  onKey(next);
                }}
              />
            </div>
          ) : null}
        </>
      ) : null}
    </header>
  );
}

function Page({ where, onKey }: { where: Location; onKey: (key: string) => void }) {
  const [section, id] = where.path.split('/').filter(Boolean);
  const page = (() => {
    if (section === undefined || section === 'payments')
      return id ? <PaymentPage id={id} /> : <PaymentsPage where={where} />;
    if (section === 'clients') return id ? <ClientPage id={id} where={where} /> : <ClientsPage where={where} />;
    if (section === 'deliveries') return id ? <DeliveryPage id={id} /> : <DeliveriesPage where={where} />;
    if (section === 'requests') return <RequestsPage where={where} />;
    if (section === 'create') return <CreatePage />;
    if (section === 'account') return <AccountPage onKey={onKey} />;
    return (
      <main>
        <h1>Not found</h1>
        <p>
          No page {where.path}. <Link to="/payments">VA payments</Link>
        </p>
      </main>
    );
  })();
  // Keyed by the path: another record's page starts empty, not with the last one's data under the new address.
  return (
    <div id="content" key={where.path}>
      {page}
    </div>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
