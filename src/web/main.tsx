import './jitless.js';
import './styles.css';
import { StrictMode, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { createApi, storedKey, storeKey } from './api.js';
import { connectLive, type Live, type LiveState } from './live.js';
import { AccountPage, KeyForm } from './pages/account.js';
import { ClientPage, ClientsPage } from './pages/clients.js';
import { CreatePage } from './pages/create.js';
import { DeliveriesPage } from './pages/deliveries.js';
import { PaymentPage } from './pages/payment.js';
import { PaymentsPage } from './pages/payments.js';
import { Link, useLocation, type Location } from './router.js';
import { AppContext } from './ui.js';

const NAV: [string, string][] = [
  ['/payments', 'VA payments'],
  ['/clients', 'Clients'],
  ['/deliveries', 'Deliveries'],
  ['/create', 'Create'],
  ['/account', 'Account'],
];

const LIVE_TEXT: Record<LiveState, string> = { connecting: 'Connecting…', connected: 'Live', reconnecting: 'Reconnecting…' };

function App() {
  const [key, setKey] = useState(storedKey);
  const where = useLocation();
  const useKey = (next: string) => {
    storeKey(next);
    setKey(next);
  };
  if (!key) {
    return (
      <>
        <Header where={where} live={null} />
        <main>
          <h1>VA sandbox inspector</h1>
          <KeyForm current={null} onKey={useKey} />
        </main>
      </>
    );
  }
  return <Connected key={key} apiKey={key} where={where} onKey={useKey} />;
}

/** Everything that needs the key: one API client and one live stream for the page's whole life. */
function Connected({ apiKey, where, onKey }: { apiKey: string; where: Location; onKey: (key: string) => void }) {
  const [liveState, setLiveState] = useState<LiveState>('connecting');
  const api = useMemo(() => createApi(apiKey), [apiKey]);
  const [live, setLive] = useState<Live | null>(null);
  useEffect(() => {
    const connection = connectLive(api, setLiveState);
    setLive(connection);
    return () => connection.stop();
  }, [api]);
  const app = useMemo(() => (live ? { api, live } : null), [api, live]);
  if (!app) return null;
  return (
    <AppContext.Provider value={app}>
      <Header where={where} live={liveState} apiKey={apiKey} />
      <Page where={where} onKey={onKey} />
    </AppContext.Provider>
  );
}

function Header({ where, live, apiKey }: { where: Location; live: LiveState | null; apiKey?: string }) {
  return (
    <header className="top">
      <a className="skip" href="#content">
        Skip to content
      </a>
      <span className="brand">va-sandbox</span>
      <nav aria-label="Sections">
        {NAV.map(([to, text]) => (
          <Link key={to} to={to} aria-current={where.path.startsWith(to) || (to === '/payments' && where.path === '/') ? 'page' : undefined}>
            {text}
          </Link>
        ))}
      </nav>
      {live ? (
        <span className={`live live-${live}`} role="status" aria-label={`Live updates: ${LIVE_TEXT[live]}`}>
          {LIVE_TEXT[live]}
        </span>
      ) : null}
      {apiKey ? (
        <span className="key" title="API key (change it on the Account page)">
          {apiKey}
        </span>
      ) : null}
    </header>
  );
}

function Page({ where, onKey }: { where: Location; onKey: (key: string) => void }) {
  const [section, id] = where.path.split('/').filter(Boolean);
  const page = (() => {
    if (section === undefined || section === 'payments') return id ? <PaymentPage id={id} /> : <PaymentsPage where={where} />;
    if (section === 'clients') return id ? <ClientPage id={id} where={where} /> : <ClientsPage where={where} />;
    if (section === 'deliveries') return <DeliveriesPage where={where} />;
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
  return <div id="content">{page}</div>;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
