import { describe, expect, it } from 'vitest';
import { LISTED_PROBLEMS } from '../src/core/account-export/account-export.js';
import { api, eventually, useServer, type Api } from './helpers.js';

/**
 * Issue 47, point 2: an import holds every claim across kinds (a CVU and an alias are one namespace, an alias is
 * ASCII in the alias pattern), every record's own bounds (a payment expires after it was made, no lone surrogate),
 * and a file with any number of bad entries is one 400 listing the first ones and how many more.
 */
const server = await useServer();
let keyN = 0;
const account = () => api(server.url, `sk_claims_${++keyN}`);
const hub = { paymentHubId: 1, currency: 'ARS' };

/** A file with hub 1, a time-locked payment (its pool entry), an amount-locked one, a client and a delivery attempted. */
async function file() {
  const source = account();
  const lent = await source.data('POST', '/api/v1/va-payments', { ...hub, lockMode: 'time', callbackUrl: 'http://127.0.0.1:9/hooks' });
  const locked = await source.data('POST', '/api/v1/va-payments', { ...hub, lockMode: 'amount', amount: 30 });
  const client = await source.data('POST', '/api/v1/clients', { paymentHubId: 1, name: 'Uno SA', taxId: '20-11111111-1' });
  await eventually(async () => (await source.list('/sandbox/v1/deliveries?status=retrying')).pagination.total > 0, 10_000, 'an attempt');
  const doc = await source.data('GET', '/sandbox/v1/export');
  return { doc, lent, locked, client, collection: doc.account.hubs['1'].collectionCvu as string };
}

const refusal = async (target: Api, body: unknown) => {
  const answer = await target.post('/sandbox/v1/import', body);
  return { answer, details: (answer.body?.error?.details ?? []) as string[] };
};

describe('POST /sandbox/v1/import: every claim across kinds, every record’s own bounds', () => {
  it('refuses an alias that is another holder’s CVU (whatever kinds), a non-ASCII alias, an expiry before creation and a lone surrogate', async () => {
    const { doc, lent, locked, client, collection } = await file();
    const cases: [string, (a: any) => void, string][] = [
      ["a client whose alias is the hub's collection CVU", (a) => (a.clients[client.id].alias = collection), `account.clients.${client.id}.alias: ${collection} is already the CVU of hub 1`],
      ["a hub whose alias is a client's CVU", (a) => (a.hubs['1'].collectionAlias = client.cvu), `account.clients.${client.id}.cvu: ${client.cvu} is already the alias of hub 1`],
      ["a free pool entry whose alias is a client's CVU", (a) => (a.pool[lent.cvu].alias = client.cvu), `account.clients.${client.id}.cvu: ${client.cvu} is already the alias of pool entry ${lent.cvu}`],
      ["a client whose alias is a pool entry's CVU", (a) => (a.clients[client.id].alias = lent.cvu), `account.clients.${client.id}.alias: ${lent.cvu} is already the CVU of pool entry ${lent.cvu}`],
      ['a client alias with a Cyrillic letter', (a) => (a.clients[client.id].alias = 'UNO.SА.SANDBOX'), `account.clients.${client.id}.alias: must be 6 to 34 ASCII letters, digits, dots or hyphens`],
      ['a hub alias with a German sharp s', (a) => (a.hubs['1'].collectionAlias = 'STRAßE.HUB'), 'account.hubs.1.collectionAlias: must be 6 to 34 ASCII'],
      ['a pool alias of 3 characters', (a) => (a.pool[lent.cvu].alias = 'A.B'), `account.pool.${lent.cvu}.alias: must be 6 to 34 ASCII`],
      ['a payment that expires before it was made', (a) => (a.vaPayments[locked.id].expiresAt = '2000-01-01T00:00:00.000Z'), `account.vaPayments.${locked.id}.expiresAt: must be after createdAt`],
      ['a payment that expires as it is made', (a) => (a.vaPayments[locked.id].expiresAt = a.vaPayments[locked.id].createdAt), `account.vaPayments.${locked.id}.expiresAt: must be after createdAt`],
      ['a lone surrogate in a name', (a) => (a.clients[client.id].name = 'Uno \ud800'), `account.clients.${client.id}.name: must be well-formed Unicode`],
      ['a lone surrogate in a metadata key', (a) => (a.vaPayments[lent.id].metadata = { ['k\udc00']: 1 }), `account.vaPayments.${lent.id}.metadata.k`],
      ['an entry whose clientId names no client of the file', (a) => (a.entries = { [lent.id]: { ...ENTRY, id: lent.id, clientId: locked.id } }), `account.entries.${lent.id}.clientId: client ${locked.id} is not in the file`],
    ];
    const target = account();
    await target.data('POST', '/api/v1/va-payments', { ...hub, lockMode: 'time' });
    const before = await target.data('GET', '/sandbox/v1/export');
    for (const [what, tamper, detail] of cases) {
      const bad = structuredClone(doc);
      tamper(bad.account);
      const { answer, details } = await refusal(target, JSON.stringify(bad));
      expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(answer.body.error.code, what).toBe('VALIDATION_ERROR');
      expect(details.some((d) => d.startsWith(detail)), `${what}: ${JSON.stringify(details)}`).toBe(true);
    }
    expect((await target.data('GET', '/sandbox/v1/export')).account).toEqual(before.account);
    expect((await target.post('/sandbox/v1/import', doc)).status).toBe(200);
  });

  it('a delivery with 20,000 bad attempts is one 400 listing the first problems and how many more, not a 500', async () => {
    const { doc } = await file();
    const [id, delivery] = Object.entries(doc.account.deliveries).find(([, d]: [string, any]) => d.attempts.length > 0) as [string, any];
    // Eight problems each: 160,000 in all, once past what a spread into `push` takes.
    const bad = { n: 'x', startedAt: 1, durationMs: 'y', responseStatus: 'z', responseBody: 2, error: 3, errorMessage: 4, extra: 1 };
    delivery.attempts = Array.from({ length: 20_000 }, () => bad);
    const { answer, details } = await refusal(account(), doc);
    expect(answer.status, JSON.stringify(answer.body).slice(0, 500)).toBe(400);
    expect(answer.body.error.code).toBe('VALIDATION_ERROR');
    expect(details).toHaveLength(LISTED_PROBLEMS + 1);
    expect(details[0]).toMatch(new RegExp(`^account\\.deliveries\\.${id}\\.attempts\\.0\\.`));
    const more = Number(/^account: (\d+) more problems not listed$/.exec(details.at(-1)!)?.[1]);
    expect(more).toBe(160_000 - LISTED_PROBLEMS);
    expect(answer.body.error.message).toMatch(new RegExp(`; and ${more + LISTED_PROBLEMS - 5} more$`));
  });
});

/** A ledger entry as an export holds it. */
const ENTRY = {
  entryType: 'credit',
  amount: 100,
  currency: 'ARS',
  description: null,
  operationId: null,
  paymentId: null,
  invoiceId: null,
  sourceType: 'other',
  createdAt: '2026-01-01T00:00:00.000Z',
};
