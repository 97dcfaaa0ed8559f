import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorStatus } from '../src/core/conventions/errors.js';
import { mulberry32 } from '../src/core/conventions/ids.js';
import { type RunningServer, startServer } from '../src/sandbox/http/server.js';
import { api, CLIENT, PAYMENT, useServer, useTmp } from './helpers.js';

/**
 * Hardening (a): thousands of generated malformed or hostile requests, sent as raw bytes over loopback to a real
 * in-process server on a data file. No answer may be a 5xx, the server must keep answering, and every error must be
 * the contract's envelope. Each request i is generated from (seed, i) alone, so `FUZZ_SEED=<seed>` replays a run and
 * the failure list names the request index.
 */
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const COUNT = 5_200;
const CONCURRENCY = 4;
/** Callback URLs the fuzz may give: loopback ports where nothing listens, so no callback ever leaves the machine. */
const DEAD_URLS = ['http://127.0.0.1:1/cb', 'http://localhost:1/hook', 'https://127.0.0.1:1/x?y=1', 'http://[::1]:1/'];

// --- a seeded PRNG ------------------------------------------------------------------------------------

type Rng = ReturnType<typeof rng>;

function rng(seed: number) {
  const next = mulberry32(seed);
  const int = (max: number) => Math.floor(next() * max);
  return {
    next,
    int,
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]): T => items[int(items.length)]!,
    /** Picks by weight: [[weight, value], …]. */
    weighted: <T>(items: readonly (readonly [number, T])[]): T => {
      let roll = next() * items.reduce((sum, [w]) => sum + w, 0);
      for (const [w, value] of items) if ((roll -= w) < 0) return value;
      return items.at(-1)![1];
    },
    bytes: (n: number) => Buffer.from(Array.from({ length: n }, () => int(256))),
  };
}

/** Percent-encodes any string, lone surrogates included (as U+FFFD, which is what a client library would send). */
const enc = (text: string) =>
  encodeURIComponent(text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));
const hex = (r: Rng, n: number) => Array.from({ length: n }, () => r.int(16).toString(16)).join('');
const uuid = (r: Rng) =>
  `${hex(r, 8)}-${hex(r, 4)}-4${hex(r, 3)}-${r.pick(['8', '9', 'a', 'b'])}${hex(r, 3)}-${hex(r, 12)}`;

// --- raw HTTP ------------------------------------------------------------------------------------------

interface RawRequest {
  method: string;
  target: string;
  headers: [string, string | Buffer][];
  body: Buffer | null;
  chunked: boolean;
}

interface RawResponse {
  status: number | null;
  headers: Record<string, string>;
  body: Buffer;
  problem: string | null;
}

function serialize(request: RawRequest, port: number): Buffer {
  const parts: Buffer[] = [
    Buffer.from(`${request.method} ${request.target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n`),
  ];
  for (const [name, value] of request.headers)
    parts.push(Buffer.from(`${name}: `), Buffer.isBuffer(value) ? value : Buffer.from(value), Buffer.from('\r\n'));
  const body = request.body;
  if (body && request.chunked) {
    parts.push(Buffer.from('Transfer-Encoding: chunked\r\n\r\n'));
    for (let at = 0; at < body.length; ) {
      const size = Math.min(body.length - at, 1 + ((at * 7919) % 40_000));
      parts.push(Buffer.from(`${size.toString(16)}\r\n`), body.subarray(at, at + size), Buffer.from('\r\n'));
      at += size;
    }
    parts.push(Buffer.from('0\r\n\r\n'));
  } else {
    if (body) parts.push(Buffer.from(`Content-Length: ${body.length}\r\n`));
    parts.push(Buffer.from('\r\n'));
    if (body) parts.push(body);
  }
  return Buffer.concat(parts);
}

/** Writes the bytes on a new connection and reads the answer until the server closes it (1xx answers skipped). */
function exchange(port: number, bytes: Buffer, timeoutMs = 20_000): Promise<RawResponse> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let problem: string | null = null;
    const timer = setTimeout(() => {
      problem = `no answer within ${timeoutMs} ms`;
      socket.destroy();
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may close before it read everything (a 413): what it answered still counts.
    socket.on('error', (error: NodeJS.ErrnoException) => (problem ??= `socket ${error.code ?? error.message}`));
    socket.on('close', () => {
      clearTimeout(timer);
      done(parseResponse(Buffer.concat(chunks), problem));
    });
    socket.end(bytes);
  });
}

function parseResponse(raw: Buffer, problem: string | null): RawResponse {
  let rest = raw;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0)
      return {
        status: null,
        headers: {},
        body: Buffer.alloc(0),
        problem: problem ?? `incomplete answer: ${JSON.stringify(rest.toString('latin1').slice(0, 80))}`,
      };
    const head = rest.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1] ?? NaN);
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    rest = rest.subarray(end + 4);
    if (status >= 100 && status < 200) continue;
    let body = rest;
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const pieces: Buffer[] = [];
      for (let at = 0; ; ) {
        const eol = body.indexOf('\r\n', at);
        const size = eol < 0 ? 0 : parseInt(body.subarray(at, eol).toString('latin1'), 16);
        if (!size) break;
        pieces.push(body.subarray(eol + 2, eol + 2 + size));
        at = eol + 2 + size + 2;
      }
      body = Buffer.concat(pieces);
    }
    return {
      status: Number.isNaN(status) ? null : status,
      headers,
      body,
      problem: Number.isNaN(status) ? `bad status line ${head[0]}` : null,
    };
  }
}

// --- the generator -----------------------------------------------------------------------------------

interface Records {
  payments: string[];
  clients: string[];
  invoices: string[];
  deliveries: string[];
  addresses: string[];
}

/** Real records to aim at: all of them, and each API key's own (ids are per account). */
interface Known extends Records {
  keys: string[];
  own: Record<string, Records>;
}

/** Every route, the methods it answers and the body fields it takes (with a valid body to start from). */
interface Route {
  path: string;
  methods: string[];
  valid?: (known: Known, r: Rng) => Record<string, unknown>;
}

const ROUTES: Route[] = [
  {
    path: '/api/v1/va-payments',
    methods: ['GET', 'POST'],
    valid: (_, r) => ({
      amount: r.pick([10, 25.5, 1500]),
      lockMode: r.pick(['time', 'amount_and_time']),
      ttlSeconds: 60 + r.int(28741),
      callbackUrl: r.pick(DEAD_URLS),
      externalReference: 'fuzz',
      metadata: { n: r.int(100) },
    }),
  },
  { path: '/api/v1/va-payments/{payment}', methods: ['GET'] },
  { path: '/api/v1/va-payments/{payment}/cancel', methods: ['POST'] },
  {
    path: '/api/v1/clients',
    methods: ['GET', 'POST'],
    valid: (_, r) => ({
      name: 'Fuzz SRL',
      taxId: `30-${10_000_000 + r.int(89_999_999)}-${r.int(10)}`,
      cashinCallbackUrl: r.pick(DEAD_URLS),
      emails: ['a@b.co'],
      phones: ['+54 11 5555-0000'],
      aliasPrefixHint: 'fuzz',
    }),
  },
  {
    path: '/api/v1/clients/{client}',
    methods: ['GET', 'PATCH'],
    valid: () => ({ name: 'Renamed SA', cashinCallbackUrl: null, externalReference: 'x' }),
  },
  { path: '/api/v1/clients/{client}/balance', methods: ['GET'] },
  { path: '/api/v1/clients/{client}/transactions', methods: ['GET'] },
  {
    path: '/api/v1/clients/{client}/invoices',
    methods: ['GET', 'POST'],
    valid: (_, r) => ({ total_amount: r.pick([1, 99.99, 1500]), description: 'fuzz', dueDate: '2026-12-31' }),
  },
  {
    path: '/api/v1/clients/{client}/invoices/{invoice}',
    methods: ['PATCH'],
    valid: (_, r) => ({ status: r.pick(['issued', 'paid', 'cancelled']) }),
  },
  {
    path: '/sandbox/v1/transfers',
    methods: ['GET', 'POST'],
    valid: (known, r) => ({
      to: known.addresses.length ? r.pick(known.addresses) : 'x',
      total: r.pick([0.01, 1, 40, 55.5, 100]),
      taxes: r.pick([0, 0.005, 0.5]),
    }),
  },
  { path: '/sandbox/v1/events', methods: ['GET'] },
  { path: '/sandbox/v1/deliveries', methods: ['GET'] },
  { path: '/sandbox/v1/deliveries/{delivery}', methods: ['GET'] },
  { path: '/sandbox/v1/deliveries/{delivery}/redeliver', methods: ['POST'] },
  { path: '/sandbox/v1/clock', methods: ['GET'] },
  {
    path: '/sandbox/v1/clock/advance',
    methods: ['POST'],
    valid: (_, r) => ({ seconds: r.pick([1, 5, 25, 60, 3600]) }),
  },
  {
    path: '/sandbox/v1/hubs/1',
    methods: ['GET', 'PATCH'],
    valid: (_, r) => ({
      cvuProvisioning: r.pick(['inline', 'delayed', 'fail']),
      dedicated_client_cvus_enabled: r.chance(0.8),
      brand: 'FUZZ',
    }),
  },
  {
    path: '/sandbox/v1/clients/{client}/cvu',
    methods: ['POST'],
    valid: (_, r) => ({ cvuStatus: r.pick(['active', 'disabled']) }),
  },
  {
    path: '/sandbox/v1/clients/{client}/debits',
    methods: ['POST'],
    valid: (_, r) => ({ amount: r.pick([0.01, 5, 12.34]), description: 'fuzz' }),
  },
  { path: '/sandbox/v1/export', methods: ['GET'] },
  {
    path: '/sandbox/v1/import',
    methods: ['POST'],
    valid: () => ({ format: 'va-sandbox-account', version: 1, exportedAt: '2026-01-01T00:00:00.000Z', account: {} }),
  },
  { path: '/sandbox/v1/reset', methods: ['POST'] },
  { path: '/sandbox/v1/stream', methods: ['GET'] },
  { path: '/health', methods: ['GET'] },
  { path: '/openapi.json', methods: ['GET'] },
  { path: '/ui/payments/{payment}', methods: ['GET'] },
];

const METHODS: (readonly [number, string])[] = [
  [30, 'GET'],
  [34, 'POST'],
  [10, 'PATCH'],
  [5, 'PUT'],
  [5, 'DELETE'],
  [5, 'HEAD'],
  [5, 'OPTIONS'],
  [2, 'TRACE'],
  [1, 'PURGE'],
  [1, 'PROPFIND'],
  [1, 'LOCK'],
  [1, 'SEARCH'],
];

const GARBAGE_IDS = [
  '',
  'null',
  'undefined',
  '0',
  '-1',
  '1e309',
  'NaN',
  '%00',
  '%2e%2e',
  '..',
  '%2F',
  '%ZZ',
  '%E0%A4%A',
  '%F0%9F%92%A9',
  '__proto__',
  'constructor',
  'toString',
  '%27%3Bdrop%20table%20va_payments%3B--',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-4fff-bfff-ffffffffffff',
  '%7B%7D',
  '%5B%5D',
  '*',
  '~',
  '%20',
  '+',
  'a%0Ab',
  '%C3%28',
];

const QUERY_KEYS = [
  'page',
  'limit',
  'status',
  'clientId',
  'clientTaxId',
  'externalReference',
  'createdFrom',
  'createdTo',
  'entryType',
  'from',
  'to',
  'eventType',
  'taxId',
  '__proto__',
  'constructor',
  'x',
];
const QUERY_VALUES = [
  '',
  '0',
  '-1',
  '1',
  '2',
  '100',
  '101',
  '1e3',
  '1.5',
  'abc',
  'NaN',
  'Infinity',
  '99999999999999999999',
  '%',
  '%ZZ',
  '%E0%A4%A',
  '%00',
  'waiting,completed',
  'waiting,,',
  ',',
  'cash_in,debit',
  'client.cashin',
  'delivered',
  '2026-01-01T00:00:00Z',
  '2026-13-45T99:99:99Z',
  'not-a-date',
  '[]',
  '{}',
  '%5B%5D',
  'true',
  'null',
  '20-301-234-5',
  '%F0%9F%92%A9',
];

const FIELDS = [
  'amount',
  'currency',
  'lockMode',
  'ttlSeconds',
  'clientId',
  'clientTaxId',
  'clientName',
  'callbackUrl',
  'successUrl',
  'failureUrl',
  'externalReference',
  'metadata',
  'paymentHubId',
  'to',
  'total',
  'taxes',
  'from',
  'name',
  'taxId',
  'cashinCallbackUrl',
  'emails',
  'phones',
  'aliasPrefixHint',
  'aliasSuffixHint',
  'total_amount',
  'description',
  'dueDate',
  'status',
  'seconds',
  'brand',
  'dedicated_client_cvus_enabled',
  'cvuProvisioning',
  'cvuStatus',
  'format',
  'version',
  'account',
  'exportedAt',
  '__proto__',
  'constructor',
  'prototype',
];

const EDGE_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.01,
  0.1,
  0.2,
  0.3,
  0.005,
  1.005,
  10,
  60,
  59,
  28800,
  28801,
  1500,
  999999999.99,
  999999999.995,
  1e9,
  1e21,
  1e308,
  -1e308,
  5e-324,
  2 ** 53 + 1,
  2 ** 31,
  -(2 ** 31),
  123.456,
  1e-7,
  3650 * 24 * 3600,
  316_000_000,
];

const EDGE_STRINGS = [
  '',
  ' ',
  'ARS',
  'USD',
  'ars',
  'time',
  'amount',
  'amount_and_time',
  'active',
  'disabled',
  'inline',
  'delayed',
  'fail',
  'issued',
  'paid',
  'cancelled',
  '20-12345678-6',
  '20123456786',
  '--',
  '2026-02-30',
  '2026-01-01',
  'SANDBOX',
  'a@b.c',
  'not-an-email',
  '\u0000',
  '\u202e',
  '\ud800',
  '\udfff',
  '💩',
  'é',
  'null',
  '__proto__',
  '0000000000000000000000',
  '1'.repeat(22),
  'x'.repeat(256),
  'x'.repeat(70_000),
  'javascript:alert(1)',
  'ftp://127.0.0.1/',
  'http://',
  `http://127.0.0.1:1/${'a'.repeat(3000)}`,
  ...DEAD_URLS,
];

function randomString(r: Rng): string {
  return r.weighted<() => string>([
    [4, () => r.pick(EDGE_STRINGS)],
    [3, () => Array.from({ length: r.int(40) }, () => String.fromCharCode(32 + r.int(95))).join('')],
    [2, () => Array.from({ length: r.int(20) }, () => String.fromCodePoint(r.int(0x2ffff))).join('')],
    [1, () => 'z'.repeat(r.int(5000))],
  ])();
}

function randomValue(r: Rng, depth: number, known: Known): unknown {
  const kind = depth > 3 ? r.int(4) : r.int(7);
  switch (kind) {
    case 0:
      return r.pick([null, true, false]);
    case 1:
      return r.pick(EDGE_NUMBERS);
    case 2:
      return r.chance(0.5) ? r.next() * 10 ** r.int(12) : r.int(2 ** 31) - 2 ** 30;
    case 3:
      return r.chance(0.2) && known.addresses.length ? r.pick(known.addresses) : randomString(r);
    case 4:
      return Array.from({ length: r.int(5) }, () => randomValue(r, depth + 1, known));
    default: {
      const object: Record<string, unknown> = {};
      for (let n = r.int(6); n > 0; n--)
        object[r.chance(0.6) ? r.pick(FIELDS) : randomString(r).slice(0, 30)] = randomValue(r, depth + 1, known);
      return object;
    }
  }
}

/** A value for a field: plausible, wrong-typed or hostile. */
function fieldValue(r: Rng, known: Known): unknown {
  return r.weighted<() => unknown>([
    [3, () => r.pick(EDGE_NUMBERS)],
    [3, () => randomString(r)],
    [2, () => randomValue(r, 2, known)],
    [1, () => (known.addresses.length ? r.pick(known.addresses) : 'x')],
    [1, () => r.pick(DEAD_URLS)],
    [1, () => uuid(r)],
  ])();
}

/** A body built from real field names with plausible, wrong or hostile values; from the route's valid body when it has one. */
function fieldBody(r: Rng, known: Known, route: Route | null): Record<string, unknown> {
  const body: Record<string, unknown> = route?.valid && r.chance(0.7) ? route.valid(known, r) : {};
  const own = Object.keys(body);
  // Usually change one field of a valid body (so the rest passes and that field is what is tested), sometimes several.
  for (let n = own.length && r.chance(0.6) ? 1 : 1 + r.int(5); n > 0; n--) {
    const field = own.length && r.chance(0.7) ? r.pick(own) : r.pick(FIELDS);
    if (r.chance(0.1)) delete body[field];
    else body[field] = fieldValue(r, known);
  }
  return body;
}

function randomBody(r: Rng, known: Known, route: Route | null): Buffer | null {
  return r.weighted<() => Buffer | null>([
    [12, () => null],
    [10, () => (route?.valid ? Buffer.from(JSON.stringify(route.valid(known, r))) : null)],
    [35, () => Buffer.from(JSON.stringify(fieldBody(r, known, route)))],
    [15, () => Buffer.from(JSON.stringify(randomValue(r, 0, known)))],
    [
      8,
      () =>
        Buffer.from(
          JSON.stringify({
            amount: r.pick([10, 25.5, 1500]),
            lockMode: r.pick(['time', 'amount', 'amount_and_time']),
            callbackUrl: r.pick(DEAD_URLS),
            ...(r.chance(0.5) ? fieldBody(r, known, null) : {}),
          }),
        ),
    ],
    [
      6,
      () =>
        Buffer.from(
          r.pick([
            '{',
            '{"amount": 10,}',
            'nul',
            "{'a':1}",
            '{"a":NaN}',
            '{"a":Infinity}',
            '[1,2',
            '1',
            '"x"',
            'null',
            'true',
            '{"amount":1e999}',
            '{"amount":10}{"amount":11}',
            '{"a":1 /* c */}',
            '\ufeff{}',
            '{"amount":10,"amount":"x"}',
            '{"__proto__":{"polluted":1}}',
            '{"metadata":{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}}',
          ]),
        ),
    ],
    // Bad UTF-8 inside a JSON string, and raw random bytes.
    [
      6,
      () =>
        Buffer.concat([
          Buffer.from(`{"${r.pick(FIELDS)}":"`),
          r.pick([
            Buffer.from([0xc3, 0x28]),
            Buffer.from([0xff, 0xfe, 0xfd]),
            Buffer.from([0xed, 0xa0, 0x80]),
            Buffer.from([0xc0, 0xaf]),
            Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
          ]),
          Buffer.from('"}'),
        ]),
    ],
    [4, () => r.bytes(1 + r.int(300))],
    [2, () => Buffer.from(JSON.stringify({ clientName: 'x'.repeat(300_000 + r.int(600_000)) }))],
    [1, () => Buffer.alloc(1024 * 1024 + 1 + r.int(100_000), 'y')],
    // Deep nesting, at the top and inside metadata.
    [
      3,
      () => {
        const depth = r.pick([1000, 10_000, 100_000, 200_000]);
        const nested = '['.repeat(depth) + ']'.repeat(depth);
        return Buffer.from(r.chance(0.5) ? nested : `{"metadata":{"a":${nested}}}`);
      },
    ],
    [
      2,
      () =>
        Buffer.from(
          JSON.stringify({
            metadata: Object.fromEntries(
              Array.from({ length: 40 + r.int(30) }, (_, i) => [`k${i}`, 'v'.repeat(r.int(400))]),
            ),
          }),
        ),
    ],
    [1, () => Buffer.from(JSON.stringify({ amount: 10 }), 'utf16le')],
  ])();
}

/** The request target: the route's path with real, random or hostile ids (or a random path), maybe a query string. */
function randomTarget(r: Rng, known: Known, route: Route | null, method: string): string {
  let path: string;
  if (route === null) {
    const segment = () =>
      r.pick([enc(randomString(r).slice(0, 60)), r.pick(GARBAGE_IDS), uuid(r), 'api', 'v1', 'sandbox', '']);
    path =
      r.pick(['/', '/api/v1/', '/sandbox/v1/', '//', '/api/v1//', '/API/V1/']) +
      Array.from({ length: r.int(5) }, segment).join('/');
  } else {
    path = route.path.replace(/\{(\w+)\}/g, (_, kind: string) => {
      const real =
        { payment: known.payments, client: known.clients, invoice: known.invoices, delivery: known.deliveries }[kind] ??
        [];
      return r.weighted<() => string>([
        [5, () => (real.length ? r.pick(real) : uuid(r))],
        [2, () => uuid(r)],
        [1, () => (real.length ? r.pick(real).toUpperCase() : uuid(r))],
        [3, () => r.pick(GARBAGE_IDS)],
        [1, () => 'a'.repeat(r.int(4000))],
        [1, () => enc(randomString(r).slice(0, 80))],
      ])();
    });
  }
  // The live stream never ends by itself: the fuzz does not open it.
  if (path === '/sandbox/v1/stream' && (method === 'GET' || method === 'HEAD')) path = '/sandbox/v1/streams';
  if (r.chance(method === 'GET' ? 0.5 : 0.2)) {
    const pairs = Array.from(
      { length: 1 + r.int(4) },
      () => `${r.pick(QUERY_KEYS)}=${r.chance(0.8) ? r.pick(QUERY_VALUES) : enc(randomString(r).slice(0, 200))}`,
    );
    path += `?${pairs.join('&')}${r.chance(0.1) ? '&&=&' : ''}`;
  }
  return path;
}

function randomHeaders(r: Rng, key: string, hasBody: boolean): [string, string | Buffer][] {
  const headers: [string, string | Buffer][] = [];
  if (r.chance(0.97)) {
    const auth = r.weighted<() => string | Buffer>([
      [100, () => `Bearer ${key}`],
      [1, () => ''],
      [1, () => 'Bearer'],
      [1, () => 'Bearer '],
      [1, () => `bearer ${key}`],
      [1, () => 'Basic dXNlcjpwYXNz'],
      [1, () => 'Bearer a b'],
      [1, () => `Bearer ${'k'.repeat(1 + r.int(6000))}`],
      [1, () => Buffer.concat([Buffer.from('Bearer sk_'), Buffer.from([0xc3, 0xa9, 0xff])])],
      [1, () => `Bearer \t ${key} \t`],
      [1, () => `Bearer ${r.pick(['constructor', 'toString', 'hasOwnProperty', 'valueOf'])}`],
    ])();
    headers.push(['Authorization', auth]);
    if (r.chance(0.05)) headers.push(['Authorization', `Bearer ${r.pick([key, 'sk_fuzz_c'])}`]);
  }
  if (hasBody || r.chance(0.1)) {
    const type = r.weighted<() => string | Buffer>([
      [30, () => 'application/json'],
      [3, () => 'application/json; charset=utf-8'],
      [1, () => 'APPLICATION/JSON'],
      [1, () => 'application/json;;;'],
      [1, () => 'application/jsonp'],
      [1, () => 'text/plain'],
      [1, () => 'application/x-www-form-urlencoded'],
      [1, () => 'multipart/form-data; boundary=zzz'],
      [1, () => ''],
      [1, () => 'application/json, text/plain'],
      [1, () => Buffer.from([0x61, 0x70, 0x70, 0xff, 0xfe])],
    ])();
    if (r.chance(0.95)) headers.push(['Content-Type', type]);
    if (r.chance(0.04)) headers.push(['Content-Type', r.pick(['text/plain', 'application/json'])]);
  }
  if (r.chance(0.15))
    headers.push([
      'Idempotency-Key',
      r.pick(['idem-1', 'idem-2', 'idem-3', '', ' ', 'x'.repeat(3000), '\u00e9', 'a:b:c']),
    ]);
  if (r.chance(0.2)) {
    for (let n = 1 + r.int(4); n > 0; n--) {
      headers.push(
        r.pick<[string, string]>([
          ['Accept', r.pick(['*/*', 'text/html', 'application/xml', '', 'application/json;q=0'])],
          ['Accept-Encoding', r.pick(['gzip, br, zstd', 'identity;q=0', '*'])],
          ['Content-Encoding', r.pick(['gzip', 'br', 'deflate'])],
          ['Expect', '100-continue'],
          ['Origin', 'http://127.0.0.1:1'],
          ['Cookie', `a=${'b'.repeat(r.int(3000))}`],
          ['Range', 'bytes=0-1'],
          ['If-None-Match', '*'],
          ['X-HTTP-Method-Override', r.pick(['DELETE', 'PATCH', 'GET'])],
          ['X-Forwarded-For', '127.0.0.1, ::1'],
          [
            `X-Fuzz-${r.int(1000)}`,
            Array.from({ length: r.int(200) }, () => String.fromCharCode(32 + r.int(95))).join(''),
          ],
        ]),
      );
    }
  }
  return headers;
}

function generate(index: number, all: Known): RawRequest {
  const r = rng((SEED ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  // The request's account, and mostly its own records (another account's ids are a test too).
  const route = r.chance(0.9) ? r.pick(ROUTES) : null;
  // Reset and import wipe an account: only the third, scratch account gets them, so the others keep their records.
  const scratch = route?.path === '/sandbox/v1/reset' || route?.path === '/sandbox/v1/import';
  const key = scratch
    ? all.keys[2]!
    : r.weighted([
        [45, all.keys[0]!],
        [45, all.keys[1]!],
        [10, all.keys[2]!],
      ]);
  const own = all.own[key];
  const known: Known = own && r.chance(0.85) ? { ...all, ...own } : all;
  // Mostly a method the route answers, so requests get past routing to validation; sometimes any method.
  const method = route && r.chance(0.75) ? r.pick(route.methods) : r.weighted(METHODS);
  const target = randomTarget(r, known, route, method);
  const body =
    method === 'GET' || method === 'HEAD'
      ? r.chance(0.05)
        ? randomBody(r, known, route)
        : null
      : randomBody(r, known, route);
  return {
    method,
    target,
    headers: randomHeaders(r, key, body !== null),
    body,
    chunked: body !== null && r.chance(0.1),
  };
}

// --- checks ------------------------------------------------------------------------------------------

const CODES = new Set(Object.keys(errorStatus));

/** What is wrong with one answer, or null: never a 5xx, every error in the envelope, every 2xx a success envelope. */
function problemWith(request: RawRequest, response: RawResponse): string | null {
  if (response.status === null) return `no answer (${response.problem})`;
  if (response.status >= 500) return `answered ${response.status}: ${response.body.toString('utf8').slice(0, 300)}`;
  if (request.method === 'HEAD') return null;
  const path = request.target.split('?')[0]!;
  // The web inspector, not the API: `/` sends browsers to `/ui/`, whose paths answer its page and assets.
  // Resolved as the server resolves it (`//../%2e%2e/` is `/` too).
  const resolved = URL.canParse(`http://127.0.0.1${path}`) ? new URL(`http://127.0.0.1${path}`).pathname : path;
  if (resolved === '/' && response.status === 302 && response.headers.location === '/ui/') return null;
  if ((path === '/ui' || path.startsWith('/ui/')) && !/json/.test(response.headers['content-type'] ?? '')) return null;
  let body: any;
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    return `answered ${response.status} with a body that is not JSON: ${JSON.stringify(response.body.toString('utf8').slice(0, 200))}`;
  }
  if (response.status >= 200 && response.status < 300) {
    if (path === '/health' || path === '/openapi.json') return null;
    return body?.success === true ? null : `2xx without the success envelope: ${JSON.stringify(body).slice(0, 200)}`;
  }
  const error = body?.error;
  const wrong: string[] = [];
  if (body?.success !== false) wrong.push('success is not false');
  if (typeof error?.code !== 'string' || !CODES.has(error.code))
    wrong.push(`error.code ${JSON.stringify(error?.code)} is not a contract code`);
  else if (errorStatus[error.code as keyof typeof errorStatus] !== response.status)
    wrong.push(`${error.code} with status ${response.status}`);
  if (typeof error?.message !== 'string') wrong.push('no error.message');
  if (!Array.isArray(error?.details) || !error.details.every((d: unknown) => typeof d === 'string'))
    wrong.push('details is not an array of strings');
  if (typeof body?.path !== 'string' || !body.path.startsWith('/')) wrong.push(`path ${JSON.stringify(body?.path)}`);
  if (typeof body?.timestamp !== 'string' || Number.isNaN(Date.parse(body.timestamp)))
    wrong.push(`timestamp ${JSON.stringify(body?.timestamp)}`);
  return wrong.length
    ? `answered ${response.status} outside the envelope (${wrong.join('; ')}): ${JSON.stringify(body).slice(0, 300)}`
    : null;
}

const describeRequest = (index: number, request: RawRequest) =>
  `#${index} ${request.method} ${request.target.slice(0, 160)} [${request.headers.map(([n, v]) => `${n}: ${String(v).slice(0, 40)}`).join(', ')}] body ${request.body ? `${request.body.length} B ${JSON.stringify(request.body.subarray(0, 80).toString('latin1'))}` : 'none'}${request.chunked ? ' chunked' : ''}`;

// --- the tests -----------------------------------------------------------------------------------------

describe('fuzz: malformed and hostile requests', () => {
  it(`${COUNT} generated requests: no 5xx, no crash, every error in the envelope (seed ${SEED})`, {
    timeout: 120_000,
  }, async () => {
    console.log(`hardening-fuzz seed ${SEED}: replay with FUZZ_SEED=${SEED}`);
    const logged: string[] = [];
    const data = join(useTmp(), 'state.db');
    const server = await startServer({ port: 0, host: '127.0.0.1', data, log: (line) => logged.push(line) });
    let before: Record<string, unknown>;
    try {
      await fuzz(server, logged);
      before = await snapshot(server.url);
    } finally {
      await server.close();
    }
    // What the fuzz stored (odd strings, odd keys) is still a state a server starts on, with the records it had.
    const again = await useServer({ data }, 'test');
    expect((await fetch(`${again.url}/health`)).status).toBe(200);
    expect(await snapshot(again.url), `seed ${SEED}: the state read back after a restart differs`).toEqual(before);
    // Nothing the fuzz sent (`__proto__` keys in bodies and metadata) reached Object.prototype of this process.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  /**
   * What each account holds, as the API shows it: counts and newest ids of payments, clients and transfers, and the
   * hub (not events: an expiry falling due between the two readings would add one).
   */
  async function snapshot(url: string): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const key of ['sk_fuzz_a', 'sk_fuzz_b', 'sk_fuzz_c', 'sk_fuzz_after']) {
      const client = api(url, key);
      for (const path of ['/api/v1/va-payments', '/api/v1/clients', '/sandbox/v1/transfers']) {
        const { data, pagination } = await client.list(`${path}?limit=100`);
        out[`${key} ${path}`] = { total: pagination.total, ids: data.map((item: { id: string }) => item.id) };
      }
      out[`${key} hub`] = await client.data('GET', '/sandbox/v1/hubs/1');
    }
    return out;
  }

  async function fuzz(server: RunningServer, logged: string[]): Promise<void> {
    const known: Known = {
      keys: ['sk_fuzz_a', 'sk_fuzz_b', 'sk_fuzz_c'],
      own: {},
      payments: [],
      clients: [],
      invoices: [],
      deliveries: [],
      addresses: [],
    };
    // Real records to aim at: the generator uses their ids in paths and their CVUs and aliases in transfers.
    for (const key of known.keys.slice(0, 2)) {
      const client = api(server.url, key);
      const created = await client.data('POST', '/api/v1/va-payments', {
        ...PAYMENT,
        amount: 100,
        callbackUrl: DEAD_URLS[0],
      });
      const locked = await client.data('POST', '/api/v1/va-payments', {
        ...PAYMENT,
        amount: 55.5,
        lockMode: 'amount',
        callbackUrl: DEAD_URLS[0],
      });
      const owner = await client.data('POST', '/api/v1/clients', {
        ...CLIENT,
        name: 'Fuzz SA',
        taxId: key === 'sk_fuzz_a' ? '20-12345678-6' : '27-1111111-2',
        cashinCallbackUrl: DEAD_URLS[1],
      });
      const invoice = await client.data('POST', `/api/v1/clients/${owner.id}/invoices`, { total_amount: 10 });
      await client.data('POST', '/sandbox/v1/transfers', { to: created.cvu, total: 40 });
      await client.data('POST', '/sandbox/v1/transfers', { to: owner.alias, total: 12.5, taxes: 0.5 });
      const deliveries = await client.list('/sandbox/v1/deliveries?limit=100');
      const own: Records = {
        payments: [created.id, locked.id],
        clients: [owner.id],
        invoices: [invoice.id],
        deliveries: deliveries.data.map((d: { id: string }) => d.id),
        addresses: [created.cvu, created.alias, owner.cvu, owner.alias, locked.cvu],
      };
      known.own[key] = own;
      for (const name of ['payments', 'clients', 'invoices', 'deliveries', 'addresses'] as const)
        known[name].push(...own[name]);
    }

    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < COUNT) {
        const index = next++;
        const request = generate(index, known);
        const response = await exchange(server.port, serialize(request, server.port));
        if (response.status !== null) statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const problem = problemWith(request, response);
        if (problem) failures.push(`${describeRequest(index, request)}\n    -> ${problem}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    console.log(
      `hardening-fuzz seed ${SEED}: statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`,
    );

    expect(next).toBeGreaterThanOrEqual(5_000);
    expect(failures.slice(0, 25), `seed ${SEED}: ${failures.length} of ${COUNT} requests failed`).toEqual([]);
    expect(
      logged.filter((line) => /internal error|failed/i.test(line)),
      `seed ${SEED}: the server logged errors`,
    ).toEqual([]);
    // Still alive, and still taking valid writes.
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const after = await api(server.url, 'sk_fuzz_after').post('/api/v1/va-payments', { ...PAYMENT, amount: 10 });
    expect(after.status).toBe(201);
    expect(after.body).toMatchObject({ success: true, data: { status: 'waiting', amount: 10 } });
  }

  const refused: [string, string][] = [
    ['an unknown method', 'FOO /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['a lower-case method', 'get /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    [
      'a NUL byte in a header value',
      'GET /api/v1/va-payments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\x00b\r\nConnection: close\r\n\r\n',
    ],
    [
      'raw non-ASCII bytes in the target',
      'GET /api/v1/va-payments/\xc3\x28 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n',
    ],
    [
      'two different Content-Length headers',
      'POST /api/v1/va-payments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}',
    ],
    [
      'a bad chunk size',
      'POST /api/v1/va-payments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    ],
    ['no Host header', 'GET /api/v1/va-payments HTTP/1.1\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n'],
    ['HTTP/1.0 without Host', 'GET /api/v1/va-payments HTTP/1.0\r\nAuthorization: Bearer k\r\n\r\n'],
    ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['a header without a colon', 'GET /health HTTP/1.1\r\nHost: x\r\nJunk\r\nConnection: close\r\n\r\n'],
    ['a space before the colon', 'GET /health HTTP/1.1\r\nHost: x\r\nX-A : b\r\nConnection: close\r\n\r\n'],
    [
      'headers over 16 KiB',
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`,
    ],
  ];

  it('requests the HTTP layer refuses (bad request line, bad headers, bad framing) get a 4xx and the server lives on', async () => {
    const server = await useServer({ data: join(useTmp(), 'refused.json') });
    for (const [what, text] of refused) {
      const response = await exchange(server.port, Buffer.from(text, 'latin1'));
      expect(response.status, what).not.toBeNull();
      expect(response.status! >= 400 && response.status! < 500, `${what}: ${response.status}`).toBe(true);
    }
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect((await api(server.url, 'sk_refused').post('/api/v1/va-payments', { ...PAYMENT, amount: 10 })).status).toBe(
      201,
    );
  });

  // Node's HTTP parser and @hono/node-server would answer these with a bare `400 Bad Request`; the server's
  // `clientError` handler and the listener's error handler answer them in the contract's envelope instead.
  it('requests the HTTP layer refuses are answered in the error envelope too', async () => {
    const server = await useServer({ data: join(useTmp(), 'refused-envelope.json') });
    const outside: string[] = [];
    for (const [what, text] of refused) {
      const response = await exchange(server.port, Buffer.from(text, 'latin1'));
      const problem = problemWith({ method: 'GET', target: '/', headers: [], body: null, chunked: false }, response);
      if (problem) outside.push(`${what}: ${problem}`);
    }
    expect(outside).toEqual([]);
  });
});

describe('hostile keys: API keys and Idempotency-Keys named like Object.prototype members', () => {
  // Tables keyed by what callers send have no prototype: a plain object would find Object.prototype's members, and
  // the first use of `Idempotency-Key: toString` would answer 409 IDEMPOTENCY_KEY_CONFLICT.
  it('a first POST with Idempotency-Key "toString", "constructor" or "__proto__" is created, not a conflict', async () => {
    const server = await useServer();
    const statuses: Record<string, number> = {};
    for (const key of ['toString', 'constructor', 'hasOwnProperty', 'valueOf', '__proto__']) {
      const response = await api(server.url, 'sk_idem_proto').post(
        '/api/v1/va-payments',
        { ...PAYMENT, amount: 10 },
        { 'Idempotency-Key': key },
      );
      statuses[key] = response.status;
    }
    expect(statuses).toEqual({ toString: 201, constructor: 201, hasOwnProperty: 201, valueOf: 201, __proto__: 201 });
  });

  // In a plain object the API key `__proto__` would set the prototype of `state.accounts`: its writes acknowledged
  // and readable, but never saved, so lost on restart.
  it('writes of the API key "__proto__" survive a restart like any other key', async () => {
    const data = join(useTmp(), 'proto-key.json');
    const first = await startServer({ port: 0, host: '127.0.0.1', data });
    const payment = await api(first.url, '__proto__').data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10 });
    const other = await api(first.url, 'sk_plain').data('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 10 });
    await first.close();
    const second = await useServer({ data }, 'test');
    expect((await api(second.url, 'sk_plain').get(`/api/v1/va-payments/${other.id}`)).status).toBe(200);
    expect((await api(second.url, '__proto__').get(`/api/v1/va-payments/${payment.id}`)).status).toBe(200);
  });
});
