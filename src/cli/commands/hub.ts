import { Command, Option } from 'commander';
import type { hubView } from '../../core/views.js';
import { apiAction, example, globalOptions, optionsOf, someOf } from '../context.js';
import { boolean } from '../options.js';
import { block } from '../render.js';

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

/** `hub show|set`: the account's payment hub and its settings (contract part 1). */
export function hubCommand(): Command {
  const show = new Command('show').description('Show the payment hub').action(apiAction<HubView>(() => ['GET', '/sandbox/v1/hub'], hubBlock));
  const set = new Command('set')
    .description('Change the payment hub: its name, brand, whether clients get dedicated CVUs, how their CVUs are provisioned')
    .option('--name <name>', 'name')
    .option('--brand <brand>', 'brand: 1 to 10 letters or digits')
    .option('--dedicated-client-cvus-enabled <bool>', 'dedicated_client_cvus_enabled: true or false', boolean)
    .addOption(new Option('--cvu-provisioning <mode>', 'cvuProvisioning: how client CVUs are provisioned').choices(['inline', 'delayed', 'fail']))
    .action(
      apiAction<HubView>((cmd) => {
        const { dedicatedClientCvusEnabled, ...rest } = optionsOf(cmd);
        return ['PATCH', '/sandbox/v1/hub', { body: someOf(cmd, { ...rest, dedicated_client_cvus_enabled: dedicatedClientCvusEnabled }, 'set') }];
      }, hubBlock),
    );
  const setExamples = ['va-sandbox hub set --cvu-provisioning delayed', 'va-sandbox hub set --dedicated-client-cvus-enabled false'];
  const command = new Command('hub')
    .description('The payment hub of the account: show it, change its settings')
    .addCommand(example(globalOptions(show), 'va-sandbox hub show'))
    .addCommand(example(globalOptions(set), ...setExamples));
  return example(command, 'va-sandbox hub show', ...setExamples);
}
