import { Command } from 'commander';
import type { transferView } from '../../core/records/views.js';
import { apiAction, example, globalOptions } from '../context.js';
import { fieldFlags } from '../flags.js';
import { money } from '../options.js';
import { ars, block, status } from '../render.js';

type TransferView = ReturnType<typeof transferView>;

/** `transfer`: the simulated bank transfer that pays a VA payment or credits a client (contract part 5). */
export function transferCommand(): Command {
  const command = new Command('transfer')
    .description('Simulate a bank transfer to a CVU or alias; taxes are withheld from the gross amount')
    .requiredOption('--to <cvu-or-alias>', 'the CVU or alias receiving the transfer')
    .requiredOption('--amount <ars>', 'gross amount in ARS (the transfer total)', money)
    .option('--taxes <ars>', 'taxes withheld by the provider (default 0)', money)
    .option('--from-name <name>', "payer's name")
    .option('--from-tax-id <cuit>', "payer's tax id")
    .option('--from-cbu <cbu>', "payer's CBU (22 digits)")
    .action(
      apiAction<TransferView>(
        (cmd) => {
          const opts = cmd.opts();
          const from = { name: opts.fromName, taxId: opts.fromTaxId, cbu: opts.fromCbu };
          const given = Object.values(from).some((value) => value !== undefined);
          return [
            'POST',
            '/sandbox/v1/transfers',
            { body: { to: opts.to, total: opts.amount, taxes: opts.taxes, from: given ? from : undefined } },
          ];
        },
        (t) =>
          block([
            ['id', t.id],
            ['operationId', t.operationId],
            ['outcome', status(t.outcome)],
            ['reason', t.reason],
            ['target', t.target && `${t.target.type} ${t.target.id}`],
            ['to', t.to],
            ['cvu', t.cvu],
            ['total', ars(t.total)],
            ['taxes', ars(t.taxes)],
            ['netAmount', ars(t.netAmount)],
            ['from', t.from && Object.values(t.from).filter(Boolean).join(', ')],
            ['eventIds', t.eventIds.join(', ')],
            ['createdAt', t.createdAt],
          ]),
      ),
    );
  fieldFlags(command, {
    total: '--amount',
    'from.name': '--from-name',
    'from.taxId': '--from-tax-id',
    'from.cbu': '--from-cbu',
  });
  return example(
    globalOptions(command),
    'va-sandbox transfer --to SANDBOX.HUB.COBROS --amount 1500',
    'va-sandbox transfer --to 0000003100012345678901 --amount 5000 --taxes 30 --from-name "Ana Pérez"',
  );
}
