import type { RouteKit } from './kit.js';

/** Contract part 5: the sandbox's own controls (transfers, clock, hub, reset) and what it observed. */
export function sandboxRoutes({ get, post, patch }: RouteKit): void {
  post('/sandbox/v1/transfers', (account, body) => account.createTransfer(body), { status: 201 });
  get('/sandbox/v1/transfers', (account, c) => account.listTransfers(c.req.query()));
  get('/sandbox/v1/events', (account, c) => account.listEvents(c.req.query()));
  get('/sandbox/v1/clock', (account) => account.clock());
  post('/sandbox/v1/clock/advance', (account, body) => account.advanceClock(body));
  get('/sandbox/v1/hub', (account) => account.hub());
  patch('/sandbox/v1/hub', (account, body) => account.patchHub(body));
  post(
    '/sandbox/v1/reset',
    (account) => {
      account.reset();
      return { reset: true };
    },
    { body: 'none' },
  );
}
