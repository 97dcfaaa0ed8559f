import { param, type RouteKit } from './kit.js';

/** Contract part 3: clients, their ledger, invoices and balance; and the sandbox's CVU switch, ledger movements and allocations. */
export function clientRoutes({ get, list, post, patch }: RouteKit): void {
  post('/api/v1/clients', (account, body) => account.clients.createClient(body), { status: 201 });
  list('/api/v1/clients', (account, query) => account.clients.listClients(query));
  get('/api/v1/clients/:id', (account, c) => account.clients.getClient(param(c, 'id')));
  patch('/api/v1/clients/:id', (account, body, c) => account.clients.updateClient(param(c, 'id'), body));
  get('/api/v1/clients/:id/balance', (account, c) => account.clients.clientBalance(param(c, 'id')));
  get('/api/v1/clients/:id/transactions', (account, c) =>
    account.clients.listTransactions(param(c, 'id'), c.req.query()),
  );
  post('/api/v1/clients/:id/invoices', (account, body, c) => account.clients.createInvoice(param(c, 'id'), body), {
    status: 201,
  });
  list('/api/v1/clients/:id/invoices', (account, query, c) => account.clients.listInvoices(param(c, 'id'), query));
  get('/api/v1/clients/:id/invoices/:invoiceId', (account, c) =>
    account.clients.getInvoice(param(c, 'id'), param(c, 'invoiceId')),
  );
  patch('/api/v1/clients/:id/invoices/:invoiceId', (account, body, c) =>
    account.clients.updateInvoice(param(c, 'id'), param(c, 'invoiceId'), body),
  );
  post('/sandbox/v1/clients/:id/cvu', (account, body, c) => account.clients.setClientCvuStatus(param(c, 'id'), body));
  post('/sandbox/v1/clients/:id/debits', (account, body, c) => account.clients.createDebit(param(c, 'id'), body), {
    status: 201,
  });
  post(
    '/sandbox/v1/clients/:id/ledger',
    (account, body, c) => account.clients.createLedgerEntry(param(c, 'id'), body),
    { status: 201 },
  );
  post(
    '/sandbox/v1/clients/:id/invoices/:invoiceId/allocations',
    (account, body, c) => account.clients.allocate(param(c, 'id'), param(c, 'invoiceId'), body),
    {
      status: 201,
    },
  );
}
