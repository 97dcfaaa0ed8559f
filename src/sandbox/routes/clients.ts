import { param, type RouteKit } from './kit.js';

/** Contract part 3: clients, their ledger, invoices and balance; and the sandbox's CVU switch, ledger movements and allocations. */
export function clientRoutes({ get, list, post, patch }: RouteKit): void {
  post('/api/v1/clients', (account, body) => account.createClient(body), { status: 201 });
  list('/api/v1/clients', (account, query) => account.listClients(query));
  get('/api/v1/clients/:id', (account, c) => account.getClient(param(c, 'id')));
  patch('/api/v1/clients/:id', (account, body, c) => account.updateClient(param(c, 'id'), body));
  get('/api/v1/clients/:id/balance', (account, c) => account.clientBalance(param(c, 'id')));
  get('/api/v1/clients/:id/transactions', (account, c) => account.listTransactions(param(c, 'id'), c.req.query()));
  post('/api/v1/clients/:id/invoices', (account, body, c) => account.createInvoice(param(c, 'id'), body), { status: 201 });
  list('/api/v1/clients/:id/invoices', (account, query, c) => account.listInvoices(param(c, 'id'), query));
  get('/api/v1/clients/:id/invoices/:invoiceId', (account, c) => account.getInvoice(param(c, 'id'), param(c, 'invoiceId')));
  patch('/api/v1/clients/:id/invoices/:invoiceId', (account, body, c) =>
    account.updateInvoice(param(c, 'id'), param(c, 'invoiceId'), body),
  );
  post('/sandbox/v1/clients/:id/cvu', (account, body, c) => account.setClientCvuStatus(param(c, 'id'), body));
  post('/sandbox/v1/clients/:id/debits', (account, body, c) => account.createDebit(param(c, 'id'), body), { status: 201 });
  post('/sandbox/v1/clients/:id/ledger', (account, body, c) => account.createLedgerEntry(param(c, 'id'), body), { status: 201 });
  post('/sandbox/v1/clients/:id/invoices/:invoiceId/allocations', (account, body, c) => account.allocate(param(c, 'id'), param(c, 'invoiceId'), body), {
    status: 201,
  });
}
