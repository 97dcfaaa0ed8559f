import { Command, Option } from 'commander';
import type { VaPaymentView } from '../../core/records/views.js';
import { VA_PAYMENT_STATUSES } from '../../core/records/words.js';
import {
  apiAction,
  contextOf,
  example,
  globalOptions,
  hubOf,
  hubOption,
  idempotencyOf,
  idempotencyOption,
  listAction,
  optionsOf,
  pageOptions,
  pathTo,
  recordId,
} from '../context.js';
import { fieldFlags } from '../flags.js';
import { duration, keyValue, money, url } from '../options.js';
import { ars, count, page, paint, pairs, status, table, viewBlock } from '../render.js';

const PATH = '/api/v1/va-payments';

/** `payments create|list|get|cancel`: contract part 2. */
export function paymentsCommand(): Command {
  const command = new Command('payments')
    .description('VA payments: create one, list, get and cancel them')
    .addCommand(createCommand())
    .addCommand(listCommand())
    .addCommand(getCommand())
    .addCommand(cancelCommand());
  return example(
    command,
    'va-sandbox payments create --amount 1500 --lock amount',
    'va-sandbox payments list --status waiting',
  );
}

function createCommand(): Command {
  const command = new Command('create')
    .description('Create a VA payment: the answer carries the CVU and alias the payer transfers to')
    .option('--amount <ars>', 'amount in ARS; required with --lock amount or amount_and_time, open when absent', money)
    .addOption(new Option('--lock <mode>', 'lockMode (default time)').choices(['time', 'amount', 'amount_and_time']))
    .option('--ttl <duration>', 'ttlSeconds: seconds or 90s, 15m, 2h (default 1800)', duration)
    .option('--currency <code>', 'currency (default ARS, the only one supported)')
    .option('--client-id <uuid>', 'clientId of the payer')
    .option('--client-tax-id <cuit>', 'clientTaxId of the payer')
    .option('--client-name <name>', 'clientName of the payer')
    .addOption(
      new Option('--callback-url <url>', 'callbackUrl: receives all seven events')
        .argParser(url)
        .conflicts(['successUrl', 'failureUrl']),
    )
    .option('--success-url <url>', 'successUrl (with --failure-url)', url)
    .option('--failure-url <url>', 'failureUrl (with --success-url)', url)
    .option('--external-reference <ref>', 'externalReference for your reconciliation')
    .option('--metadata <key=value>', 'a metadata entry (repeatable)', keyValue)
    .action(async (_opts, cmd: Command) => {
      const { client, out } = contextOf(cmd);
      const { lock, ttl, currency, ...fields } = optionsOf(cmd);
      // The API requires paymentHubId, currency and lockMode; the CLI fills them in for people.
      const body = {
        paymentHubId: hubOf(cmd),
        currency: currency ?? 'ARS',
        lockMode: lock ?? 'time',
        ...fields,
        ttlSeconds: ttl,
      };
      const { data } = await client.call<VaPaymentView>('POST', PATH, { body, ...idempotencyOf(cmd) });
      out.result(data, paymentBlock);
      if (!out.json) out.note(`pay it: va-sandbox transfer --to ${data.alias} --amount ${data.amount ?? '<ars>'}`);
    });
  return example(
    hubOption(globalOptions(idempotencyOption(fieldFlags(command, { lockMode: '--lock', ttlSeconds: '--ttl' })))),
    'va-sandbox payments create --amount 1500 --lock amount --callback-url http://127.0.0.1:9000/callbacks',
    'va-sandbox payments create --amount 2500 --ttl 15m --success-url https://shop.test/ok --failure-url https://shop.test/ko --metadata order=A-17',
    'va-sandbox payments create --amount 1500 --external-reference order-17 --idempotency-key order-17',
  );
}

function listCommand(): Command {
  const command = pageOptions(
    new Command('list')
      .description('List VA payments, newest first')
      .option('--status <list>', `status, comma-separated: ${VA_PAYMENT_STATUSES.join(', ')}`)
      .option('--client-id <uuid>', 'clientId')
      .option('--client-tax-id <cuit>', 'clientTaxId')
      .option('--external-reference <ref>', 'externalReference')
      .option('--created-from <iso>', 'created at or after this ISO 8601 time')
      .option('--created-to <iso>', 'created at or before this ISO 8601 time'),
  ).action(
    listAction<VaPaymentView>(
      (cmd) => ['GET', PATH, { query: optionsOf(cmd) }],
      (items, pagination) =>
        page(
          items,
          pagination,
          ['VA payment', 'VA payments'],
          [
            ['id', (p) => p.id],
            ['status', (p) => status(p.status)],
            ['lockMode', (p) => p.lockMode],
            ['amount', (p) => (p.amount === null ? 'open' : ars(p.amount)), 'right'],
            ['totalReceived', (p) => ars(p.totalReceived), 'right'],
            ['alias', (p) => p.alias],
            ['externalReference', (p) => p.externalReference],
            ['createdAt', (p) => p.createdAt],
          ],
        ),
    ),
  );
  return example(
    globalOptions(command),
    'va-sandbox payments list --status waiting,underpaid --limit 5',
    'va-sandbox payments list --json | jq -r ".data[].id"',
  );
}

function getCommand(): Command {
  const command = new Command('get')
    .description('One VA payment, with its payment instructions, cash-ins and callback delivery summary')
    .argument('<id>', 'VA payment id, or its first characters (8 tell it apart)')
    .action(apiAction<VaPaymentView>(async (cmd, id) => ['GET', pathTo(PATH, await paymentId(cmd, id))], paymentBlock));
  return example(globalOptions(command), 'va-sandbox payments get 9b2f6c1e-6a4e-4c1b-9a57-0f3b2d1c8e4a');
}

function cancelCommand(): Command {
  const command = new Command('cancel')
    .description('Cancel a waiting or underpaid VA payment and release its lock (event cancelled)')
    .argument('<id>', 'VA payment id, or its first characters (8 tell it apart)')
    .action(
      apiAction<VaPaymentView>(
        async (cmd, id) => ['POST', pathTo(PATH, await paymentId(cmd, id), 'cancel')],
        (payment, message) => `${message}\n${paymentBlock(payment)}`,
      ),
    );
  return example(
    globalOptions(idempotencyOption(command)),
    'va-sandbox payments cancel 9b2f6c1e-6a4e-4c1b-9a57-0f3b2d1c8e4a',
    'va-sandbox payments cancel 9b2f6c1e-6a4e-4c1b-9a57-0f3b2d1c8e4a --idempotency-key cancel-order-17',
  );
}

const paymentId = (command: Command, id: string) => recordId(command, PATH, 'VA payment', id);

function paymentBlock(p: VaPaymentView): string {
  const delivery = p.callbackDelivery;
  const deliveries = (['delivered', 'pending', 'retrying', 'failed', 'dropped', 'held'] as const)
    .filter((name) => delivery[name] > 0)
    .map((name) => `${delivery[name]} ${status(name)}`)
    .join(', ');
  const lines = viewBlock(p, {
    status,
    amount: (amount) => (amount === null ? 'open (any amount)' : ars(amount)),
    paymentInstructions: (instructions) => `${instructions.holderName}, ${instructions.bankName}`,
    metadata: pairs,
    totalReceived: ars,
    receivedAmount: ars,
    remainingAmount: ars,
    callbackDelivery: () =>
      delivery.events === 0
        ? null
        : `${count(delivery.events, ['event', 'events'])}${deliveries ? `: ${deliveries}` : ''}; last ${delivery.lastEventType}`,
  });
  if (p.cashIns.length === 0) return lines;
  const cashIns = table(p.cashIns, [
    ['operationId', (c) => c.operationId],
    ['total', (c) => ars(c.total), 'right'],
    ['taxes', (c) => ars(c.taxes), 'right'],
    ['incomingAmount', (c) => ars(c.incomingAmount), 'right'],
    ['receivedAt', (c) => c.receivedAt],
  ]);
  return `${lines}\n\n${paint('bold', 'cashIns')}\n${cashIns}`;
}
