import { param, type RouteKit } from './kit.js';

/** Contract part 2: VA payments. */
export function vaPaymentRoutes({ get, list, post }: RouteKit): void {
  post('/api/v1/va-payments', (account, body) => account.createVaPayment(body), { status: 201 });
  list('/api/v1/va-payments', (account, query) => account.listVaPayments(query));
  get('/api/v1/va-payments/:id', (account, c) => account.getVaPayment(param(c, 'id')));
  post('/api/v1/va-payments/:id/cancel', (account, _body, c) => account.cancelVaPayment(param(c, 'id')), {
    body: 'none',
    message: 'VA payment cancelled',
  });
}
