import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, ROOT, useServer } from './helpers.js';

/**
 * docs/reconciliation.md, run as written: each ```http block is sent (its info string's second word names its
 * answer for the `${name.field}` references that follow), each ```json balance block, `Ledger:` table and
 * `Invoices:` line is checked against the sandbox after it, and each ```json error block against the answer before it.
 */

type Block =
  | { kind: 'http'; name?: string; text: string }
  | { kind: 'balance' | 'error'; value: Record<string, unknown> }
  | { kind: 'ledger'; rows: [string, number][] }
  | { kind: 'invoices'; items: [string, string][] };

function blocksOf(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^```(http|json)(?: (\w+))?$/.exec(line);
    if (fence) {
      const body: string[] = [];
      while (lines[++i] !== '```') body.push(lines[i]!);
      const [, lang, word] = fence;
      if (lang === 'http') blocks.push({ kind: 'http', ...(word ? { name: word } : {}), text: body.join('\n') });
      else if (word === 'balance' || word === 'error') blocks.push({ kind: word, value: JSON.parse(body.join('\n')) });
    } else if (line === 'Ledger:') {
      const rows: [string, number][] = [];
      // "Ledger:", a blank line, the header and its rule, then one row per entry.
      for (i += 3; lines[i + 1]?.startsWith('|'); ) {
        const [entryType, amount] = lines[++i]!.split('|')
          .slice(1)
          .map((cell) => cell.trim());
        rows.push([entryType!, Number(amount)]);
      }
      blocks.push({ kind: 'ledger', rows });
    } else if (line.startsWith('Invoices: ')) {
      const items = line
        .slice('Invoices: '.length)
        .split(', ')
        .map((item) => item.split(' ') as [string, string]);
      blocks.push({ kind: 'invoices', items });
    }
  }
  return blocks;
}

const interpolate = (text: string, scope: Record<string, any>) =>
  text.replace(/\$\{(\w+)\.(\w+)\}/g, (_, name: string, field: string) => {
    const value = scope[name]?.[field];
    if (value === undefined) throw new Error(`\${${name}.${field}} is not known at this step`);
    return String(value);
  });

describe('docs/reconciliation.md', () => {
  const markdown = readFileSync(join(ROOT, 'docs', 'reconciliation.md'), 'utf8');
  const blocks = blocksOf(markdown);

  it('shows a client, two invoices, a cash-in, an allocation and a reversal, and a balance after each', () => {
    const requests = blocks.filter((b) => b.kind === 'http').map((b) => (b as { text: string }).text.split('\n')[0]);
    expect(requests).toEqual(
      expect.arrayContaining([
        'POST /api/v1/clients',
        'POST /api/v1/clients/${client.id}/invoices',
        'POST /sandbox/v1/transfers',
        'POST /sandbox/v1/clients/${client.id}/invoices/${invoice1.id}/allocations',
        'POST /sandbox/v1/clients/${client.id}/ledger',
      ]),
    );
    expect(blocks.filter((b) => b.kind === 'balance').length).toBeGreaterThanOrEqual(6);
  });

  it("runs as written: every request answers as the page says, every ledger, invoice line and balance shown is the sandbox's", async () => {
    const server = await useServer();
    const client = api(server.url, 'sk_reconciliation_doc');
    const scope: Record<string, any> = {};
    let last: { status: number; body: any } | null = null;
    for (const [n, block] of blocks.entries()) {
      const where = `block ${n} (${block.kind})`;
      if (block.kind === 'http') {
        const [request, ...body] = interpolate(block.text, scope).split('\n');
        const [method, path] = request!.split(' ') as [string, string];
        last = await client.call(method, path, body.length > 0 ? JSON.parse(body.join('\n')) : undefined);
        const expectsError = blocks[n + 1]?.kind === 'error';
        expect(
          last.status < 300,
          `${where}: ${request} -> ${last.status} ${JSON.stringify(last.body.error ?? '')}`,
        ).toBe(!expectsError);
        if (block.name) scope[block.name] = last.body.data;
      } else if (block.kind === 'error') {
        expect(last!.body.error, where).toMatchObject(block.value);
      } else if (block.kind === 'balance') {
        expect(await client.data('GET', `/api/v1/clients/${scope.client.id}/balance`), where).toEqual({
          clientId: scope.client.id,
          currency: 'ARS',
          ...block.value,
        });
      } else if (block.kind === 'ledger') {
        const { transactions } = await client.data('GET', `/api/v1/clients/${scope.client.id}/transactions?limit=100`);
        expect(
          transactions.map((e: any) => [e.entryType, e.amount]),
          where,
        ).toEqual(block.rows);
      } else if (block.kind === 'invoices') {
        const { data } = await client.list(`/api/v1/clients/${scope.client.id}/invoices?limit=100`);
        expect(data.map((i: any) => [i.invoiceNumber, i.paymentStatus]).reverse(), where).toEqual(block.items);
      }
    }
  });
});
