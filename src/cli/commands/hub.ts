import { Command, Option } from 'commander';
import type { hubView } from '../../core/records/views.js';
import { CVU_PROVISIONINGS } from '../../core/records/words.js';
import {
  apiAction,
  example,
  globalOptions,
  hubOf,
  hubOption,
  listAction,
  optionsOf,
  pageOptions,
  someOf,
} from '../context.js';
import { fieldFlags } from '../flags.js';
import { boolean } from '../options.js';
import { block, page } from '../render.js';

type HubView = ReturnType<typeof hubView>;

const hubBlock = (hub: HubView) =>
  block([
    ['id', hub.id],
    ['name', hub.name],
    ['brand', hub.brand],
    ['dedicated_client_cvus_enabled', hub.dedicated_client_cvus_enabled],
    ['cvuProvisioning', hub.cvuProvisioning],
    ['collectionCvu', hub.collectionCvu],
    ['collectionAlias', hub.collectionAlias],
  ]);

const pathOf = (command: Command) => `/sandbox/v1/hubs/${hubOf(command)}`;

/** `hub list|show|set`: the account's payment hubs and their settings (contract part 1); `--hub` picks one. */
export function hubCommand(): Command {
  const list = pageOptions(
    new Command('list').description(
      'List the payment hubs of the account (each is made on first use; with start --hubs, those hubs)',
    ),
  ).action(
    listAction<HubView>(
      (cmd) => ['GET', '/sandbox/v1/hubs', { query: optionsOf(cmd) }],
      (items, pagination) =>
        page(
          items,
          pagination,
          ['hub', 'hubs'],
          [
            ['id', (h) => h.id, 'right'],
            ['name', (h) => h.name],
            ['brand', (h) => h.brand],
            ['dedicated_client_cvus_enabled', (h) => String(h.dedicated_client_cvus_enabled)],
            ['cvuProvisioning', (h) => h.cvuProvisioning],
            ['collectionAlias', (h) => h.collectionAlias],
          ],
        ),
    ),
  );
  const show = new Command('show')
    .description('Show a payment hub (--hub, default 1)')
    .action(apiAction<HubView>((cmd) => ['GET', pathOf(cmd)], hubBlock));
  const set = new Command('set')
    .description(
      'Change a payment hub (--hub, default 1): its name, brand, whether clients get dedicated CVUs, how their CVUs are provisioned',
    )
    .option('--name <name>', 'name')
    .option('--brand <brand>', 'brand: 1 to 10 letters or digits')
    .option('--dedicated-client-cvus-enabled <bool>', 'dedicated_client_cvus_enabled: true or false', boolean)
    .addOption(
      new Option('--cvu-provisioning <mode>', 'cvuProvisioning: how client CVUs are provisioned').choices(
        CVU_PROVISIONINGS,
      ),
    )
    .action(
      apiAction<HubView>((cmd) => {
        const { dedicatedClientCvusEnabled, ...rest } = optionsOf(cmd);
        return [
          'PATCH',
          pathOf(cmd),
          { body: someOf(cmd, { ...rest, dedicated_client_cvus_enabled: dedicatedClientCvusEnabled }, 'set') },
        ];
      }, hubBlock),
    );
  const setExamples = [
    'va-sandbox hub set --cvu-provisioning delayed',
    'va-sandbox hub set --hub 123 --dedicated-client-cvus-enabled false',
  ];
  const command = new Command('hub')
    .description('The payment hubs of the account: list them, show one, change its settings')
    .addCommand(example(globalOptions(list), 'va-sandbox hub list'))
    .addCommand(
      example(
        hubOption(globalOptions(fieldFlags(show, { id: '--hub' }))),
        'va-sandbox hub show',
        'va-sandbox hub show --hub 123',
      ),
    )
    .addCommand(
      example(
        hubOption(
          globalOptions(
            fieldFlags(set, { id: '--hub', dedicated_client_cvus_enabled: '--dedicated-client-cvus-enabled' }),
          ),
        ),
        ...setExamples,
      ),
    );
  return example(command, 'va-sandbox hub show', ...setExamples);
}
