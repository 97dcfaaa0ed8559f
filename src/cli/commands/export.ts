import { writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import type { AccountExport } from '../../core/account-export.js';
import { contextOf, example, globalOptions } from '../context.js';

/** What an export holds, for people: how many records of each kind. */
const exportCounts = (doc: AccountExport): string =>
  (['vaPayments', 'clients', 'transfers', 'events', 'deliveries'] as const).map((name) => `${Object.keys(doc.account[name]).length} ${name}`).join(', ');

/** `export`: the account's whole state (payments, clients, ledger, events, delivery log, clock, hub) as one JSON file. */
export function exportCommand(): Command {
  const command = new Command('export')
    .description("Write the account's whole state as one JSON file (stdout without --out), to hand over or replay with import")
    .option('-o, --out <file>', 'write it to this file')
    .action(async (opts: { out?: string }, cmd: Command) => {
      const { client, out } = contextOf(cmd);
      const { data } = await client.call<AccountExport>('GET', '/sandbox/v1/export');
      const text = `${JSON.stringify(data, null, 2)}\n`;
      if (opts.out === undefined) {
        process.stdout.write(text);
        return;
      }
      await writeFile(opts.out, text);
      out.result({ file: opts.out, exportedAt: data.exportedAt }, () => `exported ${exportCounts(data)} (sandbox time ${data.exportedAt}) to ${opts.out}`);
    });
  return example(globalOptions(command), 'va-sandbox export --out incident.json', 'va-sandbox --api-key sk_ci_42 export > incident.json');
}
