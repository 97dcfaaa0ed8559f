import { writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import { NotASandboxError } from '../../client/api-client.js';
import type { AccountExport } from '../../core/account-export/account-export.js';
import type { Client } from '../client.js';
import { contextOf, example, given, globalOptions } from '../context.js';
import { progressWanted, withProgress } from '../progress.js';

/** What an export holds, for people: how many records of each kind. */
const exportCounts = (doc: AccountExport): string =>
  (['vaPayments', 'clients', 'transfers', 'events', 'deliveries'] as const)
    .map((name) => `${Object.keys(doc.account[name]).length} ${name}`)
    .join(', ');

/** `export`: the account's whole state (payments, clients, ledger, events, delivery log, clock, hub) as one JSON file. */
export function exportCommand(): Command {
  const command = new Command('export')
    .description(
      "Write the account's whole state as one JSON file (stdout without --out), to hand over or replay with import",
    )
    .option('-o, --out <file>', 'write it to this file')
    .action(async (opts: { out?: string }, cmd: Command) => {
      const { client, out } = contextOf(cmd);
      const download = downloadExport(client);
      const data = await withProgress(
        progressWanted(given<boolean>(cmd, 'json') === true),
        download.progress,
        download.data,
      );
      const text = `${JSON.stringify(data, null, 2)}\n`;
      if (opts.out === undefined) {
        process.stdout.write(text);
        return;
      }
      await writeFile(opts.out, text);
      out.result(
        { file: opts.out, exportedAt: data.exportedAt },
        () => `exported ${exportCounts(data)} (sandbox time ${data.exportedAt}) to ${opts.out}`,
      );
    });
  return example(
    globalOptions(command),
    'va-sandbox export --out incident.json',
    'va-sandbox --api-key sk_ci_42 export > incident.json',
  );
}

/** Sizes as the line counts them: KB below 10 MB (else a small export reads "0 of 2 MB"). */
const sizeIn = (bytes: number): [number, string] =>
  bytes < 10 * 1024 * 1024 ? [1024, 'KB received'] : [1024 * 1024, 'MB received'];

/**
 * The export, read as it arrives, so its progress is how much of the answer came, when its size is known (a server
 * streams it as it reads it, with no Content-Length: the line then says how long it has run).
 */
function downloadExport(client: Client) {
  const started = performance.now();
  let received = 0;
  let total = 0;
  let answered: number | null = null;
  const data = (async () => {
    const answer = await client.send('GET', '/sandbox/v1/export');
    answered = performance.now();
    total = Number(answer.body.headers['content-length'] ?? 0);
    const chunks: Buffer[] = [];
    for await (const chunk of answer.body) {
      chunks.push(chunk as Buffer);
      received += (chunk as Buffer).length;
    }
    let envelope: { success?: boolean; data: AccountExport } | undefined;
    try {
      envelope = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      // not JSON: not a sandbox's answer
    }
    if (envelope?.success !== true) throw new NotASandboxError(client.url, answer.status);
    return envelope.data;
  })();
  // Time left is reckoned from the download's pace, not from the wait before it.
  const progress = () => {
    const [size, unit] = sizeIn(total);
    return {
      what: 'export',
      done: received / size,
      total: total / size,
      unit,
      elapsedMs: performance.now() - (answered ?? started),
    };
  };
  return { data, progress };
}
