import { Command, Option } from 'commander';
import { INVOICE_STATUSES } from '../../core/state.js';
import type { invoiceView } from '../../core/views.js';
import { apiAction, listAction, example, globalOptions, optionsOf, pageOptions, pathTo, someOf } from '../context.js';
import { money } from '../options.js';
import { ars, block, page, status } from '../render.js';

type InvoiceView = ReturnType<typeof invoiceView>;

const CLIENT = 'f3b1c9d2-8e7a-4b6c-9d0e-1a2b3c4d5e6f';
const PATH = '/api/v1/clients';

/** `invoices create|update|list`: a client's invoices (contract part 3); their totals count in the balance. */
export function invoicesCommand(): Command {
  const command = new Command('invoices')
    .description("A client's invoices: create, update and list them")
    .addCommand(createCommand())
    .addCommand(updateCommand())
    .addCommand(listCommand());
  return example(command, `va-sandbox invoices create ${CLIENT} --total-amount 12000`, `va-sandbox invoices list ${CLIENT}`);
}

/** The invoice's fields as options, shared by create and update; the body takes the contract's names. */
function invoiceOptions(command: Command, totalRequired: boolean): Command {
  const total = new Option('--total-amount <ars>', 'total_amount in ARS').argParser(money).makeOptionMandatory(totalRequired);
  return command
    .addOption(total)
    .option('--description <text>', 'description')
    .option('--due-date <yyyy-mm-dd>', 'dueDate')
    .addOption(new Option('--status <status>', `status (default ${INVOICE_STATUSES[0]})`).choices(INVOICE_STATUSES))
    .option('--external-reference <ref>', 'externalReference');
}

function invoiceBody(command: Command): Record<string, unknown> {
  const { totalAmount, ...fields } = optionsOf(command);
  return { ...fields, total_amount: totalAmount };
}

function createCommand(): Command {
  const command = invoiceOptions(
    new Command('create').description('Assign an invoice to a client').argument('<client-id>', 'client id'),
    true,
  ).action(apiAction<InvoiceView>((cmd, clientId) => ['POST', pathTo(PATH, clientId, 'invoices'), { body: invoiceBody(cmd) }], invoiceBlock));
  return example(globalOptions(command), `va-sandbox invoices create ${CLIENT} --total-amount 12000 --description "March fee" --due-date 2026-03-31`);
}

function updateCommand(): Command {
  const command = invoiceOptions(
    new Command('update')
      .description('Update an invoice: any field given changes, the others stay')
      .argument('<client-id>', 'client id')
      .argument('<invoice-id>', 'invoice id'),
    false,
  ).action(
    apiAction<InvoiceView>(
      (cmd, clientId, invoiceId) => ['PATCH', pathTo(PATH, clientId, 'invoices', invoiceId), { body: someOf(cmd, invoiceBody(cmd), 'update') }],
      invoiceBlock,
    ),
  );
  return example(globalOptions(command), `va-sandbox invoices update ${CLIENT} 5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f --status paid`);
}

function listCommand(): Command {
  const command = pageOptions(
    new Command('list')
      .description("List a client's invoices, newest first")
      .argument('<client-id>', 'client id'),
  )
    .action(
      listAction<InvoiceView>(
        (cmd, clientId) => ['GET', pathTo(PATH, clientId, 'invoices'), { query: optionsOf(cmd) }],
        (items, pagination) =>
          page(items, pagination, ['invoice', 'invoices'], [
            ['id', (i) => i.id],
            ['status', (i) => status(i.status)],
            ['total_amount', (i) => ars(i.total_amount), 'right'],
            ['dueDate', (i) => i.dueDate],
            ['description', (i) => i.description],
            ['createdAt', (i) => i.createdAt],
          ]),
      ),
    );
  return example(globalOptions(command), `va-sandbox invoices list ${CLIENT}`);
}

function invoiceBlock(i: InvoiceView): string {
  return block([
    ['id', i.id],
    ['clientId', i.clientId],
    ['status', status(i.status)],
    ['total_amount', ars(i.total_amount)],
    ['description', i.description],
    ['dueDate', i.dueDate],
    ['externalReference', i.externalReference],
    ['createdAt', i.createdAt],
    ['updatedAt', i.updatedAt],
  ]);
}
