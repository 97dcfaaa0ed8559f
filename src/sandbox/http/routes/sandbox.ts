import { runTrigger } from '../../runtime/triggers.js';
import { param, type RouteKit } from './kit.js';

/** Contract parts 1, 4 and 5: the sandbox's own controls (transfers, clock, forwarding, faults, hubs, reset) and what it observed. */
export function sandboxRoutes({ runtime, get, list, post, patch, put, delete: del }: RouteKit): void {
  post('/sandbox/v1/transfers', (account, body) => account.transfers.createTransfer(body), { status: 201 });
  post('/sandbox/v1/triggers', (account, body) => runTrigger(runtime, account, body), { status: 201 });
  list('/sandbox/v1/transfers', (account, query) => account.transfers.listTransfers(query));
  list('/sandbox/v1/events', (account, query) => account.events.listEvents(query));
  get('/sandbox/v1/clock', (account) => account.clock.view());
  post('/sandbox/v1/clock/advance', (account, body) => runtime.moveClock(account, 'advance', body));
  post('/sandbox/v1/clock/set', (account, body) => runtime.moveClock(account, 'set', body));
  // Read while a long request of the account runs (the CLI polls it for its progress line).
  get('/sandbox/v1/progress', (account) => runtime.progress.of(account.key));
  get('/sandbox/v1/forwarding', (account) => account.deliveries.forwarding());
  put('/sandbox/v1/forwarding', (account, body) => account.deliveries.setForwarding(body));
  del('/sandbox/v1/forwarding', (account) => account.deliveries.deleteForwarding(), { body: 'none' });
  get('/sandbox/v1/faults', (account) => account.deliveries.faults());
  put('/sandbox/v1/faults', (account, body) => account.deliveries.setFaults(body));
  // Listing makes the hubs --hubs names, and reading a hub that is new makes it (as a create naming it would), so
  // both are stored like a write.
  list('/sandbox/v1/hubs', (account, query) => account.hubs.listHubs(query), { stores: true });
  get('/sandbox/v1/hubs/:id', (account, c) => account.hubs.hub(param(c, 'id')), { stores: true });
  patch('/sandbox/v1/hubs/:id', (account, body, c) => account.hubs.patchHub(param(c, 'id'), body));
  post(
    '/sandbox/v1/reset',
    async (account) => {
      await account.reset();
      return { reset: true };
    },
    { body: 'none' },
  );
}
