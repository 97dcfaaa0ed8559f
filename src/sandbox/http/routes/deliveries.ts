import { liveStream } from '../stream.js';
import { param, type RouteKit } from './kit.js';

/** Contract part 5: the delivery log, manual redelivery, the release of held deliveries and the live stream of an account. */
export function deliveryRoutes({ app, runtime, get, list, post }: RouteKit): void {
  list('/sandbox/v1/deliveries', (account, query) => account.deliveries.listDeliveries(query));
  get('/sandbox/v1/deliveries/:id', (account, c) => account.deliveries.getDelivery(param(c, 'id')));
  post(
    '/sandbox/v1/deliveries/:id/redeliver',
    (account, body, c) => account.deliveries.redeliver(param(c, 'id'), body),
    { status: 201, body: 'optional' },
  );
  post('/sandbox/v1/deliveries/release', (account) => account.deliveries.releaseAll(), { body: 'none' });
  post('/sandbox/v1/deliveries/:id/release', (account, body, c) => account.deliveries.release(param(c, 'id'), body), {
    body: 'optional',
  });
  app.get('/sandbox/v1/stream', liveStream(runtime));
}
