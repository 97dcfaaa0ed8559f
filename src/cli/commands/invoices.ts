import { Command, Option } from 'commander';
import type { entryView, invoiceView } from '../../core/records/views.js';
import { INVOICE_TYPES } from '../../core/records/words.js';
import {
  apiAction,
  example,
  globalOptions,
  idempotencyOption,
  listAction,
  optionsOf,
  pageOptions,
  pathTo,
  someOf,
} from '../context.js';
import { money } from '../options.js';
import { ars, block, page, status } from '../render.js';

type InvoiceView = ReturnType<typeof invoiceView>;
type EntryView = ReturnType<typeof entryView>;

const CLIENT = 'f3b1c9d2-8e7a-4b6c-9d0e-1a2b3c4d5e6f';
const INVOICE = '5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f';
const PATH = '/api/v1/clients';

/** `invoices create|update|get|list|allocate`: a client's invoices (contract part 3); their totals count in the balance. */
export function invoicesCommand(): Command {
  const command = new Command('invoices')
    .description("A client's invoices: create, update, get and list them, and allocate cash to them")
    .addCommand(createCommand())
    .addCommand(updateCommand())
    .addCommand(getCommand())
    .addCommand(listCommand())
    .addCommand(allocateCommand());
  return example(
    command,
    `va-sandbox invoices create ${CLIENT} --total-amount 12100 --subtotal-net 10000 --vat-amount 2100`,
    `va-sandbox invoices list ${CLIENT}`,
  );
}

/** The invoice's fields as options, shared by create and update; each option is named after its field. */
function invoiceOptions(command: Command, totalRequired: boolean): Command {
  const total = new Option('--total-amount <ars>', "totalAmount (the spec's total_amount) in ARS")
    .argParser(money)
    .makeOptionMandatory(totalRequired);
  return command
    .addOption(total)
    .addOption(new Option('--invoice-type <letter>', 'invoiceType (default B)').choices(INVOICE_TYPES))
    .option('--invoice-number <number>', "invoiceNumber, like 0001-00000042 (default: the account's next)")
    .option('--subtotal-net <ars>', 'subtotalNet: the net amount', money)
    .option('--vat-amount <ars>', 'vatAmount: the VAT', money)
    .option('--other-taxes <ars>', 'otherTaxes', money)
    .option('--seller-tax-id <cuit>', 'sellerTaxId')
    .option('--seller-name <name>', 'sellerName')
    .option('--issued-at <iso>', 'issuedAt: an ISO 8601 date or time (default now)')
    .option('--due-at <iso>', 'dueAt: an ISO 8601 date or time')
    .option('--payment-terms <text>', 'paymentTerms')
    .option('--observations <text>', 'observations');
}

function createCommand(): Command {
  const command = invoiceOptions(
    new Command('create')
      .description('Assign an invoice to a client: pending, buyer fields from the client')
      .argument('<client-id>', 'client id'),
    true,
  ).action(
    apiAction<InvoiceView>(
      (cmd, clientId) => ['POST', pathTo(PATH, clientId, 'invoices'), { body: optionsOf(cmd) }],
      invoiceBlock,
    ),
  );
  return example(
    globalOptions(idempotencyOption(command)),
    `va-sandbox invoices create ${CLIENT} --total-amount 12000 --observations "March fee" --due-at 2026-03-31`,
  );
}

function updateCommand(): Command {
  const command = invoiceOptions(
    new Command('update')
      .description('Update an invoice: any field given changes, the others stay; --cancel cancels it')
      .argument('<client-id>', 'client id')
      .argument('<invoice-id>', 'invoice id')
      .option('--cancel', 'paymentStatus: cancelled'),
    false,
  ).action(
    apiAction<InvoiceView>((cmd, clientId, invoiceId) => {
      const { cancel, ...fields } = optionsOf(cmd);
      const body = someOf(cmd, { ...fields, paymentStatus: cancel ? 'cancelled' : undefined }, 'update');
      return ['PATCH', pathTo(PATH, clientId, 'invoices', invoiceId), { body }];
    }, invoiceBlock),
  );
  return example(
    globalOptions(command),
    `va-sandbox invoices update ${CLIENT} ${INVOICE} --due-at 2026-04-30`,
    `va-sandbox invoices update ${CLIENT} ${INVOICE} --cancel`,
  );
}

function getCommand(): Command {
  const command = new Command('get')
    .description('One invoice of a client')
    .argument('<client-id>', 'client id')
    .argument('<invoice-id>', 'invoice id')
    .action(
      apiAction<InvoiceView>(
        (_cmd, clientId, invoiceId) => ['GET', pathTo(PATH, clientId, 'invoices', invoiceId)],
        invoiceBlock,
      ),
    );
  return example(globalOptions(command), `va-sandbox invoices get ${CLIENT} ${INVOICE}`);
}

function listCommand(): Command {
  const command = pageOptions(
    new Command('list').description("List a client's invoices, newest first").argument('<client-id>', 'client id'),
  ).action(
    listAction<InvoiceView>(
      (cmd, clientId) => ['GET', pathTo(PATH, clientId, 'invoices'), { query: optionsOf(cmd) }],
      (items, pagination) =>
        page(
          items,
          pagination,
          ['invoice', 'invoices'],
          [
            ['id', (i) => i.id],
            ['invoiceNumber', (i) => `${i.invoiceType} ${i.invoiceNumber}`],
            ['paymentStatus', (i) => status(i.paymentStatus)],
            ['totalAmount', (i) => ars(i.totalAmount), 'right'],
            ['dueAt', (i) => i.dueAt],
            ['issuedAt', (i) => i.issuedAt],
          ],
        ),
    ),
  );
  return example(globalOptions(command), `va-sandbox invoices list ${CLIENT}`);
}

function allocateCommand(): Command {
  const command = new Command('allocate')
    .description(
      "Apply some of the client's cash to an invoice (sandbox): an invoice_allocation entry; the invoice turns partial or paid",
    )
    .argument('<client-id>', 'client id')
    .argument('<invoice-id>', 'invoice id')
    .requiredOption(
      '--amount <ars>',
      'amount in ARS: at most what the invoice owes and the cash not yet allocated',
      money,
    )
    .action(
      apiAction<EntryView>(
        (cmd, clientId, invoiceId) => [
          'POST',
          pathTo('/sandbox/v1/clients', clientId, 'invoices', invoiceId, 'allocations'),
          { body: optionsOf(cmd) },
        ],
        (e) =>
          block([
            ['id', e.id],
            ['entryType', e.entryType],
            ['amount', ars(e.amount)],
            ['invoiceId', e.invoiceId],
            ['createdAt', e.createdAt],
          ]),
      ),
    );
  return example(globalOptions(command), `va-sandbox invoices allocate ${CLIENT} ${INVOICE} --amount 5000`);
}

function invoiceBlock(i: InvoiceView): string {
  return block([
    ['id', i.id],
    ['clientId', i.clientId],
    ['invoiceNumber', i.invoiceNumber],
    ['invoiceType', i.invoiceType],
    ['paymentStatus', status(i.paymentStatus)],
    ['totalAmount', ars(i.totalAmount)],
    ['subtotalNet', ars(i.subtotalNet)],
    ['vatAmount', ars(i.vatAmount)],
    ['otherTaxes', ars(i.otherTaxes)],
    ['seller', [i.sellerName, i.sellerTaxId].filter(Boolean).join(' ') || null],
    ['buyer', `${i.buyerName} ${i.buyerTaxId}`],
    ['issuedAt', i.issuedAt],
    ['dueAt', i.dueAt],
    ['paymentTerms', i.paymentTerms],
    ['observations', i.observations],
    ['createdAt', i.createdAt],
    ['updatedAt', i.updatedAt],
  ]);
}
