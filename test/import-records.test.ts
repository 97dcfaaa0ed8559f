import { describe, expect, it } from 'vitest';
import { LISTED_PROBLEMS } from '../src/core/account-export/account-export.js';
import { exportedAccount } from '../src/core/account-export/export-records.js';
import { type Api, api, eventually, useServer } from './helpers.js';

/**
 * Issue 38, findings 2 and 4: an incident file may hold anything. Each CVU and alias has one holder and every pointer
 * between holders agrees both ways, or the import is a 400 naming the records (it once took such a file, and a new
 * payment got a CVU in use); a malformed record of any kind is a 400, never a 500 from the checks across records.
 */
const server = await useServer();
let keyN = 0;
const account = () => api(server.url, `sk_records_${++keyN}`);
const hub = { paymentHubId: 1, currency: 'ARS' };

/**
 * A file with a record of every kind: hub 1 with its pool, an active time-locked payment (`lent`), one paid and ended
 * (`ended`, its CVU free again), an active amount-locked one (`locked`), a client with its CVU, ledger and invoice, a
 * transfer, an idempotency key, and a delivery with a failed attempt.
 */
async function everyKind() {
  const source = account();
  const callbackUrl = 'http://127.0.0.1:9/hooks';
  const ended = await source.data('POST', '/api/v1/va-payments', { ...hub, lockMode: 'time', amount: 10, callbackUrl });
  const lent = (
    await source.post('/api/v1/va-payments', { ...hub, lockMode: 'time', amount: 20 }, { 'idempotency-key': 'k1' })
  ).body.data;
  await source.data('POST', '/sandbox/v1/transfers', {
    to: ended.cvu,
    total: 10,
    taxes: 1,
    from: { name: 'Payer', taxId: '20-1', cbu: '0'.repeat(22) },
  });
  const locked = await source.data('POST', '/api/v1/va-payments', { ...hub, lockMode: 'amount', amount: 30 });
  const client = await source.data('POST', '/api/v1/clients', {
    paymentHubId: 1,
    name: 'Uno SA',
    taxId: '20-11111111-1',
  });
  await source.data('POST', '/sandbox/v1/transfers', { to: client.cvu, total: 5 });
  await source.data('POST', `/api/v1/clients/${client.id}/invoices`, { total_amount: 3 });
  await eventually(
    async () => (await source.list('/sandbox/v1/deliveries?status=retrying')).pagination.total > 0,
    10_000,
    'an attempt',
  );
  const doc = await source.data('GET', '/sandbox/v1/export');
  // A CVU of another account's client: valid, and held by no record of this file (pool CVUs are numbered the same
  // in every account).
  const stranger = (
    await account().data('POST', '/api/v1/clients', { paymentHubId: 1, name: 'Stranger', taxId: '20-99999999-1' })
  ).cvu;
  return { doc, lent, ended, locked, client, stranger };
}

const refusal = async (target: Api, file: unknown) => {
  const answer = await target.post('/sandbox/v1/import', file);
  return { answer, details: (answer.body?.error?.details ?? []) as string[] };
};

/** The contract's error envelope, VALIDATION_ERROR. */
function expectValidationError(answer: { status: number; body: any }, what: string) {
  expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).toBe(400);
  expect(answer.body, what).toMatchObject({
    success: false,
    error: { code: 'VALIDATION_ERROR', message: expect.any(String) },
    path: '/sandbox/v1/import',
  });
  expect(answer.body.error.details.length, what).toBeGreaterThan(0);
  expect(Date.parse(answer.body.timestamp), what).not.toBeNaN();
}

/** A change to a file's account, and the start of the detail its refusal names. */
type Case = [string, (account: any) => void, string];

/** Each case's file is a 400 VALIDATION_ERROR naming its detail, and leaves the account it was sent to as it was. */
async function expectEachRefused(doc: any, cases: Case[]): Promise<Api> {
  const target = account();
  await target.data('POST', '/api/v1/va-payments', { ...hub, lockMode: 'time' });
  const before = await target.data('GET', '/sandbox/v1/export');
  for (const [what, tamper, detail] of cases) {
    const bad = structuredClone(doc);
    tamper(bad.account);
    // Sent as text: a lone surrogate is kept only there.
    const { answer, details } = await refusal(target, JSON.stringify(bad));
    expectValidationError(answer, what);
    expect(
      details.some((d) => d.startsWith(detail)),
      `${what}: ${JSON.stringify(details)}`,
    ).toBe(true);
  }
  expect((await target.data('GET', '/sandbox/v1/export')).account).toEqual(before.account);
  return target;
}

describe('POST /sandbox/v1/import: each CVU and alias has one holder, and pointers agree both ways', () => {
  it('refuses a pool entry, client or hub that claims a CVU or alias another holds, naming both; the account stays as it was', async () => {
    const { doc, lent, ended, locked, client, stranger } = await everyKind();
    const collection = doc.account.hubs['1'].collectionCvu;
    const cases: Case[] = [
      [
        "a pool entry that marks an active payment's CVU free",
        (a) => Object.assign(a.pool[lent.cvu], { vaPaymentId: null, releasedAt: doc.exportedAt }),
        `account.vaPayments.${lent.id}.cvu: pool entry ${lent.cvu} marks it free`,
      ],
      [
        'a client on the CVU a payment holds',
        (a) => (a.clients[client.id].cvu = lent.cvu),
        `account.clients.${client.id}.cvu: ${lent.cvu} is already the CVU of pool entry ${lent.cvu} (lent to VA payment ${lent.id})`,
      ],
      [
        'a client on the alias a payment holds',
        (a) => (a.clients[client.id].alias = lent.alias.toLowerCase()),
        `account.clients.${client.id}.alias: ${lent.alias.toLowerCase()} is already the alias of pool entry ${lent.cvu}`,
      ],
      [
        'a hub on the CVU a payment holds',
        (a) => (a.hubs['1'].collectionCvu = lent.cvu),
        `account.hubs.1.collectionCvu: ${lent.cvu} is already the CVU of pool entry ${lent.cvu} (lent to VA payment ${lent.id})`,
      ],
      [
        'a free pool entry lent to an active payment that holds another CVU',
        (a) => (a.pool[ended.cvu].vaPaymentId = lent.id),
        `account.pool.${ended.cvu}.vaPaymentId: VA payment ${lent.id} does not hold this CVU (it is waiting, on CVU ${lent.cvu})`,
      ],
      [
        'a pool entry lent to an ended payment',
        (a) => (a.pool[ended.cvu].vaPaymentId = ended.id),
        `account.pool.${ended.cvu}.vaPaymentId: VA payment ${ended.id} does not hold this CVU (it is completed`,
      ],
      [
        'a pool entry lent to an amount-locked payment',
        (a) => (a.pool[ended.cvu].vaPaymentId = locked.id),
        `account.pool.${ended.cvu}.vaPaymentId: VA payment ${locked.id} does not hold this CVU (it is waiting, amount-locked)`,
      ],
      [
        'a pool entry under another CVU than its own',
        (a) => (a.pool[stranger] = a.pool[ended.cvu]),
        `account.pool.${stranger}.cvu: must equal its key ${stranger}`,
      ],
      [
        "a client on the hub's collection CVU",
        (a) => (a.clients[client.id].cvu = collection),
        `account.clients.${client.id}.cvu: ${collection} is already the CVU of hub 1`,
      ],
      [
        "an amount-locked payment off its hub's collection CVU",
        (a) => (a.vaPayments[locked.id].cvu = stranger),
        `account.vaPayments.${locked.id}.cvu: an amount-locked payment is on its hub's collection CVU ${collection}`,
      ],
      [
        'an active payment on a CVU no pool entry lends',
        (a) => (a.vaPayments[lent.id].cvu = stranger),
        `account.vaPayments.${lent.id}.cvu: ${stranger} is not a pool entry of the file`,
      ],
      [
        'an active payment with another alias than its pool entry',
        (a) => (a.vaPayments[lent.id].alias = 'OTRO.ALIAS.X'),
        `account.vaPayments.${lent.id}.alias: must be ${lent.alias}`,
      ],
    ];
    await expectEachRefused(doc, cases);
  });

  it('takes the file as exported: a new payment gets a CVU no one holds, and transfers reach the holder the file names', async () => {
    const { doc, lent, locked, client } = await everyKind();
    const target = account();
    expect((await target.post('/sandbox/v1/import', doc)).status).toBe(200);
    const { hubs, pool, vaPayments, clients } = (await target.data('GET', '/sandbox/v1/export')).account;
    expect({ hubs, pool, vaPayments, clients }).toEqual({
      hubs: doc.account.hubs,
      pool: doc.account.pool,
      vaPayments: doc.account.vaPayments,
      clients: doc.account.clients,
    });
    const fresh = await target.data('POST', '/api/v1/va-payments', { ...hub, lockMode: 'time' });
    expect([lent.cvu, doc.account.hubs['1'].collectionCvu, client.cvu]).not.toContain(fresh.cvu);
    const credited = async (to: string, total: number) =>
      (await target.data('POST', '/sandbox/v1/transfers', { to, total })).target;
    expect(await credited(lent.cvu, 1)).toEqual({ type: 'va_payment', id: lent.id });
    expect(await credited(doc.account.hubs['1'].collectionCvu, 30)).toEqual({ type: 'va_payment', id: locked.id });
    expect(await credited(client.cvu, 1)).toEqual({ type: 'client', id: client.id });
  });
});

/** A value of another JSON type than `value`'s. */
const otherType = (value: unknown): unknown => (typeof value === 'string' ? 12345 : value === null ? { x: 1 } : 'x');

/** Where records sit in an export: each table's first record, and the objects nested in records. */
function recordSites(doc: any): { table: string; path: (string | number)[] }[] {
  const sites = Object.keys(exportedAccount.shape).map((table) => {
    const key = Object.keys(doc.account[table])[0];
    if (key === undefined) throw new Error(`the fixture has no ${table}`);
    return { table, path: [table, key] as (string | number)[] };
  });
  const firstWith = (table: string, has: (record: any) => boolean) =>
    Object.entries(doc.account[table]).find(([, r]) => has(r))![0];
  const paid = firstWith('vaPayments', (p) => p.cashIns.length > 0);
  const paying = firstWith('transfers', (t) => t.from !== null && t.target !== null);
  const attempted = firstWith('deliveries', (d) => d.attempts.length > 0);
  return [
    ...sites,
    { table: 'vaPayments', path: ['vaPayments', paid, 'cashIns', 0] },
    { table: 'transfers', path: ['transfers', paying, 'from'] },
    { table: 'transfers', path: ['transfers', paying, 'target'] },
    { table: 'deliveries', path: ['deliveries', attempted, 'attempts', 0] },
  ];
}

const at = (root: any, path: (string | number)[]) => path.reduce((value, step) => value[step], root);

describe('POST /sandbox/v1/import: every malformed record is a 400, never a 500', () => {
  it('answers 400 VALIDATION_ERROR naming the record for null, a wrong type, an unexpected key or a prototype name, in every kind of record and field', {
    timeout: 120_000,
  }, async () => {
    const { doc } = await everyKind();
    const target = account();
    const before = await target.data('GET', '/sandbox/v1/export');
    /** Whether a record's own schema takes it (so a change that keeps it valid is not a case). */
    const takes = (table: string, record: unknown) =>
      ((exportedAccount.shape as any)[table].valueType as { safeParse(v: unknown): { success: boolean } }).safeParse(
        record,
      ).success;
    const cases: { what: string; file: string; names: string }[] = [];
    /** A case, unless the change leaves the record at `record` (table, key) one its schema takes. */
    const add = (
      what: string,
      tamper: (file: any) => void,
      names: string,
      raw?: (text: string) => string,
      record?: (string | number)[],
    ) => {
      const file = structuredClone(doc);
      tamper(file);
      if (record && takes(String(record[0]), at(file.account, record))) return;
      cases.push({ what, file: raw ? raw(JSON.stringify(file)) : JSON.stringify(file), names });
    };
    for (const { table, path } of recordSites(doc)) {
      const name = `account.${path.join('.')}`;
      const recordPath = path.slice(0, 2);
      const set = (value: unknown) => (file: any) => {
        const parent = at(file.account, path.slice(0, -1));
        parent[path.at(-1)!] = value;
      };
      add(`${name} null`, set(null), name, undefined, recordPath);
      add(`${name} a string`, set('x'), name, undefined, recordPath);
      add(`${name} an array`, set([]), name, undefined, recordPath);
      add(`${name} with an unexpected key`, (file) => (at(file.account, path).unexpected = 1), name);
      add(`${name} with a constructor key`, (file) => (at(file.account, path).constructor = 1), name);
      // Put in as text: assigning __proto__ would set the object's prototype, not a key.
      add(
        `${name} with a __proto__ key`,
        (file) => (at(file.account, path).__marker__ = 1),
        name,
        (text) => text.replace('"__marker__":1', '"__proto__":{"polluted":1}'),
      );
      for (const [field, value] of Object.entries(at(doc.account, path))) {
        for (const [kind, bad] of [
          ['null', null],
          ['a wrong type', otherType(value)],
        ] as const) {
          const file = structuredClone(doc);
          at(file.account, path)[field] = bad;
          if (takes(table, at(file.account, recordPath))) continue;
          cases.push({ what: `${name}.${field} ${kind}`, file: JSON.stringify(file), names: `${name}.${field}` });
        }
      }
    }
    for (const table of Object.keys(exportedAccount.shape)) {
      const [, record] = Object.entries(doc.account[table])[0]!;
      add(`account.${table} null`, (file) => (file.account[table] = null), `account.${table}`);
      add(`account.${table} an array`, (file) => (file.account[table] = [record]), `account.${table}`);
      // An Idempotency-Key is the caller's: "constructor" is one like any other (below).
      if (table === 'idempotency') continue;
      add(
        `a ${table} record under the key constructor`,
        (file) => (file.account[table].constructor = record),
        `account.${table}.constructor`,
      );
      add(
        `a ${table} record under the key __proto__`,
        (file) => (file.account[table].__marker__ = record),
        `account.${table}.__proto__`,
        (text) => text.replace('"__marker__":', '"__proto__":'),
      );
    }
    const version1 = (hubValue: unknown) => (file: any) => {
      const { hubs: _hubs, ...rest } = file.account;
      Object.assign(file, { version: 1, account: { hub: hubValue, ...rest } });
    };
    add('a version-1 file with hub null', version1(null), 'account.hubs.1');
    add('a version-1 file with hub a string', version1('x'), 'account.hubs.1');
    add('account null', (file) => (file.account = null), 'account');
    add('an account with a constructor key', (file) => (file.account.constructor = {}), 'account');
    add(
      'an account with a __proto__ key',
      (file) => (file.account.__marker__ = {}),
      'account',
      (text) => text.replace('"__marker__":', '"__proto__":'),
    );
    // A file whose envelope is wrong is parsed whole: its checks across records must not read a null record either.
    add(
      'a wrong format with a null payment',
      (file) =>
        Object.assign(file, {
          format: 'x',
          account: { ...file.account, vaPayments: { [Object.keys(file.account.vaPayments)[0]!]: null } },
        }),
      'format',
    );
    add(
      'a time past the bound with a bad invoice',
      (file) =>
        Object.assign(file, {
          exportedAt: '9999-06-01T00:00:00.000Z',
          account: { ...file.account, invoices: { [Object.keys(file.account.invoices)[0]!]: { total_amount: 'x' } } },
        }),
      'exportedAt',
    );
    add(
      'cashIns a string',
      (file) => ((Object.values(file.account.vaPayments)[0] as any).cashIns = 'x'),
      'account.vaPayments.',
    );

    expect(cases.length).toBeGreaterThan(300);
    console.log(`malformed import files: ${cases.length}`);
    for (const { what, file, names } of cases) {
      const { answer, details } = await refusal(target, file);
      expectValidationError(answer, what);
      expect(
        details.some((d) => d.startsWith(names)),
        `${what}: ${JSON.stringify(details)}`,
      ).toBe(true);
    }
    expect((await target.data('GET', '/sandbox/v1/export')).account).toEqual(before.account);
    expect(({} as any).polluted).toBeUndefined();
    expect((await target.post('/sandbox/v1/import', doc)).status).toBe(200);
  });

  it('takes Idempotency-Keys named constructor and __proto__ as keys like any other: they replay after the import', async () => {
    const source = account();
    const body = { ...hub, lockMode: 'time' };
    const made = await Promise.all(
      ['constructor', '__proto__'].map(
        async (key) => (await source.post('/api/v1/va-payments', body, { 'idempotency-key': key })).body.data.id,
      ),
    );
    const target = account();
    expect((await target.post('/sandbox/v1/import', await source.data('GET', '/sandbox/v1/export'))).status).toBe(200);
    for (const [i, key] of ['constructor', '__proto__'].entries()) {
      const replay = await target.post('/api/v1/va-payments', body, { 'idempotency-key': key });
      expect(replay.headers.get('idempotent-replayed'), key).toBe('true');
      expect(replay.body.data.id).toBe(made[i]);
    }
  });
});

/**
 * Issue 47, point 2: a CVU and an alias are one namespace, an alias is ASCII in the alias pattern, a payment expires
 * after it was made, no lone surrogate; a file with any number of bad entries is one 400 listing the first ones.
 */
/** A file with hub 1, a time-locked payment (its pool entry), an amount-locked one, a client and a delivery attempted. */
async function claimsFile() {
  const source = account();
  const lent = await source.data('POST', '/api/v1/va-payments', {
    ...hub,
    lockMode: 'time',
    callbackUrl: 'http://127.0.0.1:9/hooks',
  });
  const locked = await source.data('POST', '/api/v1/va-payments', { ...hub, lockMode: 'amount', amount: 30 });
  const client = await source.data('POST', '/api/v1/clients', {
    paymentHubId: 1,
    name: 'Uno SA',
    taxId: '20-11111111-1',
  });
  await eventually(
    async () => (await source.list('/sandbox/v1/deliveries?status=retrying')).pagination.total > 0,
    10_000,
    'an attempt',
  );
  const doc = await source.data('GET', '/sandbox/v1/export');
  return { doc, lent, locked, client, collection: doc.account.hubs['1'].collectionCvu as string };
}

describe('POST /sandbox/v1/import: every claim across kinds, every record’s own bounds (issue 47)', () => {
  it('refuses an alias that is another holder’s CVU (whatever kinds), a non-ASCII alias, an expiry before creation and a lone surrogate', async () => {
    const { doc, lent, locked, client, collection } = await claimsFile();
    const cases: Case[] = [
      [
        "a client whose alias is the hub's collection CVU",
        (a) => (a.clients[client.id].alias = collection),
        `account.clients.${client.id}.alias: ${collection} is already the CVU of hub 1`,
      ],
      [
        "a hub whose alias is a client's CVU",
        (a) => (a.hubs['1'].collectionAlias = client.cvu),
        `account.clients.${client.id}.cvu: ${client.cvu} is already the alias of hub 1`,
      ],
      [
        "a free pool entry whose alias is a client's CVU",
        (a) => (a.pool[lent.cvu].alias = client.cvu),
        `account.clients.${client.id}.cvu: ${client.cvu} is already the alias of pool entry ${lent.cvu}`,
      ],
      [
        "a client whose alias is a pool entry's CVU",
        (a) => (a.clients[client.id].alias = lent.cvu),
        `account.clients.${client.id}.alias: ${lent.cvu} is already the CVU of pool entry ${lent.cvu}`,
      ],
      [
        'a client alias with a Cyrillic letter',
        (a) => (a.clients[client.id].alias = 'UNO.SА.SANDBOX'),
        `account.clients.${client.id}.alias: must be 6 to 34 ASCII letters, digits, dots or hyphens`,
      ],
      [
        'a hub alias with a German sharp s',
        (a) => (a.hubs['1'].collectionAlias = 'STRAßE.HUB'),
        'account.hubs.1.collectionAlias: must be 6 to 34 ASCII',
      ],
      [
        'a pool alias of 3 characters',
        (a) => (a.pool[lent.cvu].alias = 'A.B'),
        `account.pool.${lent.cvu}.alias: must be 6 to 34 ASCII`,
      ],
      [
        'a payment that expires before it was made',
        (a) => (a.vaPayments[locked.id].expiresAt = '2000-01-01T00:00:00.000Z'),
        `account.vaPayments.${locked.id}.expiresAt: must be after createdAt`,
      ],
      [
        'a payment that expires as it is made',
        (a) => (a.vaPayments[locked.id].expiresAt = a.vaPayments[locked.id].createdAt),
        `account.vaPayments.${locked.id}.expiresAt: must be after createdAt`,
      ],
      [
        'a lone surrogate in a name',
        (a) => (a.clients[client.id].name = 'Uno \ud800'),
        `account.clients.${client.id}.name: must be well-formed Unicode`,
      ],
      [
        'a lone surrogate in a metadata key',
        (a) => (a.vaPayments[lent.id].metadata = { 'k\udc00': 1 }),
        `account.vaPayments.${lent.id}.metadata.k`,
      ],
      [
        'an entry whose clientId names no client of the file',
        (a) => (a.entries = { [lent.id]: { ...ENTRY, id: lent.id, clientId: locked.id } }),
        `account.entries.${lent.id}.clientId: client ${locked.id} is not in the file`,
      ],
    ];
    const target = await expectEachRefused(doc, cases);
    expect((await target.post('/sandbox/v1/import', doc)).status).toBe(200);
  });

  it('a delivery with 20,000 bad attempts is one 400 listing the first problems and how many more, not a 500', async () => {
    const { doc } = await claimsFile();
    const [id, delivery] = Object.entries(doc.account.deliveries).find(
      ([, d]: [string, any]) => d.attempts.length > 0,
    ) as [string, any];
    // Eight problems each: 160,000 in all, once past what a spread into `push` takes.
    const bad = {
      n: 'x',
      startedAt: 1,
      durationMs: 'y',
      responseStatus: 'z',
      responseBody: 2,
      error: 3,
      errorMessage: 4,
      extra: 1,
    };
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
