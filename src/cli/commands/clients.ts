import { Command, Option } from 'commander';
import type { balanceView, clientView, entryView } from '../../core/records/views.js';
import { ENTRY_TYPES } from '../../core/records/words.js';
import {
  apiAction,
  example,
  globalOptions,
  hubOf,
  hubOption,
  idempotencyOption,
  listAction,
  optionsOf,
  pageOptions,
  pathTo,
  recordId,
  someOf,
} from '../context.js';
import { fieldFlags } from '../flags.js';
import { collect, keyValue, url } from '../options.js';
import { ars, block, type Pagination, page, pairs, status, viewBlock } from '../render.js';

type ClientView = ReturnType<typeof clientView>;
type EntryView = ReturnType<typeof entryView>;
type BalanceView = ReturnType<typeof balanceView>;

const PATH = '/api/v1/clients';
const ID = 'f3b1c9d2-8e7a-4b6c-9d0e-1a2b3c4d5e6f';

/** `clients create|list|get|update|balance|transactions|cvu`: contract part 3. */
export function clientsCommand(): Command {
  const command = new Command('clients')
    .description('Clients with a dedicated CVU: create, list, get and update them; their balance and transactions')
    .addCommand(createCommand())
    .addCommand(listCommand())
    .addCommand(getCommand())
    .addCommand(updateCommand())
    .addCommand(balanceCommand())
    .addCommand(transactionsCommand())
    .addCommand(cvuCommand());
  return example(
    command,
    'va-sandbox clients create --name "Ana Pérez" --tax-id 20-12345678-6',
    `va-sandbox clients balance ${ID}`,
  );
}

/** The options of the client's fields, shared by create and update. */
function clientOptions(command: Command): Command {
  return fieldFlags(command, { emails: '--email', phones: '--phone' })
    .option('--cashin-callback-url <url>', 'cashinCallbackUrl: receives a POST for each transfer to the CVU', url)
    .option('--email <email>', 'an email (repeatable; update replaces the list)', collect)
    .option('--phone <phone>', 'a phone (repeatable; update replaces the list)', collect)
    .option('--alias-prefix-hint <text>', 'aliasPrefixHint for the CVU alias')
    .option('--alias-suffix-hint <text>', 'aliasSuffixHint for the CVU alias')
    .option('--external-reference <ref>', 'externalReference')
    .option('--metadata <key=value>', 'a metadata entry (repeatable; update replaces the metadata)', keyValue);
}

/** The request body from those options: the contract's field names; `--no-cashin-callback-url` sends null. */
function clientBody(command: Command): Record<string, unknown> {
  const { email, phone, cashinCallbackUrl, ...fields } = optionsOf(command);
  return {
    ...fields,
    emails: email,
    phones: phone,
    cashinCallbackUrl: cashinCallbackUrl === false ? null : cashinCallbackUrl,
  };
}

function createCommand(): Command {
  const command = clientOptions(
    new Command('create')
      .description("Create a client: with the hub's inline provisioning the answer carries its active CVU and alias")
      .requiredOption('--name <name>', 'name')
      .requiredOption('--tax-id <cuit>', 'taxId (CUIT), unique in the account'),
  ).action(
    apiAction<ClientView>(
      (cmd) => ['POST', PATH, { body: { paymentHubId: hubOf(cmd), ...clientBody(cmd) } }],
      clientBlock,
    ),
  );
  return example(
    hubOption(globalOptions(idempotencyOption(command))),
    'va-sandbox clients create --name "Ana Pérez" --tax-id 20-12345678-6 --cashin-callback-url http://127.0.0.1:9000/cashin',
  );
}

function updateCommand(): Command {
  const command = clientOptions(
    new Command('update')
      .description('Update a client: any field given changes, the others stay')
      .argument('<id>', 'client id')
      .option('--name <name>', 'name')
      .option('--tax-id <cuit>', 'taxId (CUIT), unique in the account'),
  )
    .option('--no-cashin-callback-url', 'remove the cashinCallbackUrl')
    .action(
      apiAction<ClientView>(
        (cmd, id) => ['PATCH', pathTo(PATH, id), { body: someOf(cmd, clientBody(cmd), 'update') }],
        clientBlock,
      ),
    );
  return example(
    globalOptions(command),
    `va-sandbox clients update ${ID} --cashin-callback-url https://shop.test/cashin`,
    `va-sandbox clients update ${ID} --no-cashin-callback-url`,
  );
}

function listCommand(): Command {
  const command = pageOptions(
    new Command('list')
      .description('List clients, newest first')
      .option('--tax-id <cuit>', 'taxId')
      .option('--external-reference <ref>', 'externalReference'),
  ).action(
    listAction<ClientView>(
      (cmd) => ['GET', PATH, { query: optionsOf(cmd) }],
      (items, pagination) =>
        page(
          items,
          pagination,
          ['client', 'clients'],
          [
            ['id', (c) => c.id],
            ['name', (c) => c.name],
            ['taxId', (c) => c.taxId],
            ['cvuStatus', (c) => status(c.cvuStatus)],
            ['cvu', (c) => c.cvu],
            ['alias', (c) => c.alias],
            ['createdAt', (c) => c.createdAt],
          ],
        ),
    ),
  );
  return example(
    globalOptions(command),
    'va-sandbox clients list',
    'va-sandbox clients list --tax-id 20-12345678-6 --json',
  );
}

function getCommand(): Command {
  const command = new Command('get')
    .description('One client, with its CVU and alias')
    .argument('<id>', 'client id, or its first characters (8 tell it apart)')
    .action(
      apiAction<ClientView>(
        async (cmd, id) => ['GET', pathTo(PATH, await recordId(cmd, PATH, 'client', id))],
        clientBlock,
      ),
    );
  return example(globalOptions(command), `va-sandbox clients get ${ID}`);
}

function balanceCommand(): Command {
  const command = new Command('balance')
    .description("A client's balance: totalCashIn - totalCashOut - totalInvoiced")
    .argument('<id>', 'client id')
    .action(
      apiAction<BalanceView>(
        (_cmd, id) => ['GET', pathTo(PATH, id, 'balance')],
        (b) =>
          block([
            ['clientId', b.clientId],
            ['totalCashIn', ars(b.totalCashIn)],
            ['totalCashOut', ars(b.totalCashOut)],
            ['totalInvoiced', ars(b.totalInvoiced)],
            ['balance', ars(b.balance)],
          ]),
      ),
    );
  return example(globalOptions(command), `va-sandbox clients balance ${ID}`);
}

function transactionsCommand(): Command {
  const command = pageOptions(
    new Command('transactions')
      .description("A client's transaction history (credits and debits), newest first")
      .argument('<id>', 'client id')
      .option('--entry-type <list>', `entryType, comma-separated: ${ENTRY_TYPES.join(', ')}`)
      .option('--from <iso>', 'created at or after this ISO 8601 time')
      .option('--to <iso>', 'created at or before this ISO 8601 time'),
  ).action(
    // The real shape of this one list keeps its items inside `data`: `data.transactions`, `data.pagination`.
    apiAction<{ transactions: EntryView[]; pagination: Pagination }>(
      (cmd, id) => ['GET', pathTo(PATH, id, 'transactions'), { query: optionsOf(cmd) }],
      ({ transactions, pagination }) =>
        page(
          transactions,
          pagination,
          ['transaction', 'transactions'],
          [
            ['createdAt', (e) => e.createdAt],
            ['entryType', (e) => e.entryType],
            ['amount', (e) => ars(e.amount), 'right'],
            ['description', (e) => e.description],
            ['paymentId', (e) => e.paymentId],
            ['operationId', (e) => e.operationId],
          ],
        ),
    ),
  );
  return example(globalOptions(command), `va-sandbox clients transactions ${ID} --entry-type cash_in --limit 50`);
}

function cvuCommand(): Command {
  const command = new Command('cvu')
    .description(
      "Move a client's CVU (sandbox): provisioning or active for one not provisioned yet (a manual hub's), active or disabled",
    )
    .argument('<id>', 'client id')
    .addOption(
      new Option('--status <cvuStatus>', 'the cvuStatus to set')
        .choices(['provisioning', 'active', 'disabled'])
        .makeOptionMandatory(),
    )
    .action(
      apiAction<ClientView>(
        (cmd, id) => ['POST', pathTo('/sandbox/v1/clients', id, 'cvu'), { body: { cvuStatus: optionsOf(cmd).status } }],
        clientBlock,
      ),
    );
  return example(
    globalOptions(fieldFlags(command, { cvuStatus: '--status' })),
    `va-sandbox clients cvu ${ID} --status active`,
  );
}

function clientBlock(c: ClientView): string {
  return viewBlock(c, {
    cvuStatus: status,
    emails: (emails) => emails.join(', '),
    phones: (phones) => phones.join(', '),
    metadata: pairs,
    paymentHubId: (hub) => `${hub} (${c.hubName})`,
    hubName: () => undefined,
  });
}
