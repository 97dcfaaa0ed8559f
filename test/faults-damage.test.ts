import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { type Flip, HEADER, KEY, pageFlips, written } from './damage.js';
import { api, eventually, freePort, PAYMENT, retryingDelivery, spawnCli, useTmp } from './helpers.js';

/**
 * A damaged database at start: whatever byte of its header or of a page is flipped, the built CLI's `start` either
 * serves (every answer the contract's envelope: a 500 only for a record it names, an export always answered) or exits
 * 1 with exactly one line, naming the file, and no stack trace.
 */

interface Outcome {
  code: number | null;
  stderr: string;
  answers: { path: string; status: number; body: any }[];
}

const READS = [
  '/api/v1/va-payments?limit=100',
  '/api/v1/clients',
  '/sandbox/v1/events',
  '/sandbox/v1/deliveries',
  '/sandbox/v1/export',
];

/** Starts the built CLI on `data`: its exit code and stderr if it refused, else its answers to reads and a create, then stopped. */
async function startOn(data: string): Promise<Outcome> {
  const port = await freePort();
  const cli = spawnCli(['start', '--port', String(port), '--data', data, '--quiet']);
  const listening = await eventually(
    () => (cli.child.exitCode !== null ? 'exited' : cli.stdout().includes('listening') && 'listening'),
    20_000,
    'a start or a refusal',
  );
  const answers: Outcome['answers'] = [];
  if (listening === 'listening') {
    const client = api(`http://127.0.0.1:${port}`, KEY);
    // A server that died meanwhile answers nothing: status 0.
    const call = (method: string, path: string, body?: unknown) =>
      client.call(method, path, body).catch((error: Error) => ({ status: 0, body: String(error.cause ?? error) }));
    for (const path of READS) answers.push({ path, ...(await call('GET', path)) });
    answers.push({ path: 'create', ...(await call('POST', '/api/v1/va-payments', { ...PAYMENT, amount: 7 })) });
    cli.child.kill('SIGTERM');
  }
  return { code: await cli.exited, stderr: cli.stderr(), answers };
}

describe('a damaged database at start', () => {
  it('whatever header byte or b-tree page byte is flipped, a start serves or exits 1 with one line naming the file', {
    timeout: 300_000,
  }, async () => {
    const dir = useTmp();
    const base = join(dir, 'base.db');
    await written(base);
    const flips = [...HEADER, ...pageFlips(base)];
    const source = readFileSync(base);
    const outcomes: string[] = [];
    const problems: string[] = [];
    let refused = 0;
    const queue = [...flips.entries()];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await tryFlip(...next);
    };
    await Promise.all([worker(), worker()]); // two starts at a time
    console.log(
      `faults-damage: ${flips.length} flips, ${refused} refused with one line, ${flips.length - refused} served\n${outcomes.sort().join('\n')}`,
    );
    expect(problems).toEqual([]);
    expect(refused).toBeGreaterThan(flips.length / 4); // the corpus does damage what a start checks

    async function tryFlip(n: number, flip: Flip): Promise<void> {
      const data = join(dir, `case-${n}.db`);
      const bytes = Buffer.from(source);
      bytes[flip.at]! ^= flip.mask;
      writeFileSync(data, bytes);
      const { code, stderr, answers } = await startOn(data);
      const lines = stderr.trim() === '' ? [] : stderr.trim().split('\n');
      const name = `${flip.what} ^0x${flip.mask.toString(16)}`;
      if (answers.length === 0) {
        refused++;
        outcomes.push(`${name}: refused: ${lines[0]}`);
        if (code !== 1 || lines.length !== 1 || !lines[0]!.includes(data))
          problems.push(`${name}: exit ${code}, stderr ${JSON.stringify(stderr)}`);
        return;
      }
      // An index that disagrees with its table answers lists wrongly: the start's integrity check refuses it.
      if (flip.what.startsWith('index')) problems.push(`${name}: served`);
      outcomes.push(`${name}: served ${answers.map((a) => a.status).join(' ')}`);
      for (const { path, status, body } of answers) {
        // A 500 is only a record it names (in the file it names); an export is always answered, damaged records left out.
        const named = status === 500 && body?.error?.code === 'INTERNAL_ERROR' && body.error.message.includes(data);
        if (!((status > 0 && status < 300) || named) || (path === '/sandbox/v1/export' && status !== 200))
          problems.push(`${name}: ${path} ${status} ${JSON.stringify(body).slice(0, 300)}`);
      }
      if (code !== 0 || /^\s+at /m.test(stderr))
        problems.push(`${name}: stopped with exit ${code}, stderr ${JSON.stringify(stderr.slice(0, 500))}`);
    }
  });

  it('a record whose JSON is damaged is a 500 naming the file, the table and the record; an export leaves it out and names it', {
    timeout: 60_000,
  }, async () => {
    const data = join(useTmp(), 'state.db');
    await written(data);
    const db = new DatabaseSync(data);
    const { id } = db.prepare("SELECT id FROM va_payments WHERE external_reference = 'r3'").get() as { id: string };
    db.prepare('UPDATE va_payments SET data = replace(data, \'"amount":10300\', \'"amount"10300\') WHERE id = ?').run(
      id,
    );
    const events = (
      db.prepare("SELECT id FROM events WHERE data ->> '$.vaPaymentId' = ?").all(id) as { id: string }[]
    ).map((row) => row.id);
    db.close();
    const { code, stderr, answers } = await startOn(data);
    const byPath = Object.fromEntries(answers.map((answer) => [answer.path, answer]));
    expect(code).toBe(0);
    const list = byPath['/api/v1/va-payments?limit=100']!;
    expect(list.status).toBe(500);
    expect(list.body.error.message).toMatch(
      new RegExp(
        `^${data}: va_payments record ${id} cannot be read \\(.*\\): the database is damaged; restore it from a backup, or export what can be read`,
      ),
    );
    const exported = byPath['/sandbox/v1/export']!;
    expect(exported.status).toBe(200);
    expect([...exported.body.unreadable].sort()).toEqual(
      [`va_payments ${id}`, ...events.map((event) => `events ${event}`)].sort(),
    );
    expect(Object.keys(exported.body.data.account.vaPayments)).toHaveLength(22);
    expect(byPath.create!.status).toBe(201);
    // The server log says what the answer said, in one line.
    expect(stderr).toContain(`GET /api/v1/va-payments: ${data}: va_payments record ${id} cannot be read`);
  });

  it('a start whose due work reads a record whose JSON is damaged is refused with one line naming the file and the record', {
    timeout: 60_000,
  }, async () => {
    // A payment that expires 2 s after it is made, its `created` callback refused by a closed port: its expiry at the
    // next start reads that delivery (its events go out in order).
    const data = join(useTmp(), 'state.db');
    const { payment, delivery } = await retryingDelivery(data, KEY, { amount: 5, ttlSeconds: 2 });
    const db = new DatabaseSync(data);
    db.prepare(`UPDATE deliveries SET data = replace(data, '"url":', '"url"') WHERE id = ?`).run(delivery.id);
    db.close();
    await eventually(() => Date.now() > Date.parse(payment.expiresAt) + 500, 5_000, 'the expiry');
    const { code, stderr, answers } = await startOn(data);
    expect(answers).toEqual([]);
    expect(code).toBe(1);
    const lines = stderr
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('va-sandbox: '));
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^va-sandbox: ${data} is damaged \\(deliveries record ${delivery.id} cannot be read \\(.*\\)\\): restore it from a backup`,
        ),
      ),
    ]);
    expect(stderr).not.toMatch(/^\s+at /m);
  });
});
