import { param, type RouteKit } from './kit.js';

/** Contract part 2: VA payments. */
export function vaPaymentRoutes({ get, list, post }: RouteKit): void {
  post('/api/v1/va-payments', (account, body) => account.vaPayments.createVaPayment(body), { status: 201 });
  list('/api/v1/va-payments', (account, query) => account.vaPayments.listVaPayments(query));
  get('/api/v1/va-payments/:id', (account, c) => account.vaPayments.getVaPayment(param(c, 'id')));
  post('/api/v1/va-payments/:id/cancel', (account, _body, c) => account.vaPayments.cancelVaPayment(param(c, 'id')), {
    body: 'none',
    message: 'VA payment cancelled',
  });
}
