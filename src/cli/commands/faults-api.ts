import { Command, Option } from 'commander';
import { faultText, ruleWhen } from '../../client/api-fault-words.js';
import type { ApiFaultRuleView } from '../../core/api-faults/api-faults.js';
import { type ApiFaultType, apiFaultKinds } from '../../core/records/words.js';
import { apiAction, example, globalOptions, listAction, pageOptions, pathTo } from '../context.js';
import { milliseconds, positiveInt } from '../options.js';
import { block, table } from '../render.js';

const PATH = '/sandbox/v1/api-faults';

interface AddOptions {
  path: string;
  method?: string;
  status?: number;
  delay?: number;
  reset?: true;
  hang?: number | true;
  lostAnswer?: true;
  times?: number;
  probability?: number;
  seed?: number;
}

const ruleBlock = (rule: ApiFaultRuleView) =>
  block([
    ['id', rule.id],
    ['method', rule.method],
    ['path', rule.path],
    ['fault', faultText(rule.fault)],
    ['applies', ruleWhen(rule)],
    ['hits', rule.hits],
    ['createdAt', rule.createdAt],
  ]);

const number = (value: string): number => {
  if (value.trim() === '' || !Number.isFinite(Number(value))) throw new Error('must be a number');
  return Number(value);
};

/** Each fault kind's flag, and the fault it asks for when given (a kind without one is a type error). */
const FAULT_FLAGS: { [K in ApiFaultType]: [flag: string, fault: (o: AddOptions) => object | false] } = {
  error: ['--status S', (o) => o.status !== undefined && { type: 'error', status: o.status }],
  delay: ['--delay MS', (o) => o.delay !== undefined && { type: 'delay', ms: o.delay }],
  reset: ['--reset', (o) => o.reset === true && { type: 'reset' }],
  hang: ['--hang [MS]', (o) => o.hang !== undefined && { type: 'hang', ...(o.hang === true ? {} : { ms: o.hang }) }],
  lost_answer: ['--lost-answer', (o) => o.lostAnswer === true && { type: 'lost_answer' }],
};
const FLAGS = Object.values(FAULT_FLAGS).map(([flag]) => flag);
const ONE_OF = `${FLAGS.slice(0, -1).join(', ')} or ${FLAGS.at(-1)}`;

/** The rule a command's flags ask for: exactly one fault flag; `--times 1` when neither `--times` nor `--probability` is given. */
function ruleOf(command: Command) {
  const o = command.opts<AddOptions>();
  const faults = Object.values(FAULT_FLAGS)
    .map(([, fault]) => fault(o))
    .filter(Boolean);
  if (faults.length !== 1) command.error(`give one fault: ${ONE_OF}`);
  if (o.times !== undefined && o.probability !== undefined) command.error('give --times or --probability, not both');
  if (o.seed !== undefined && o.probability === undefined) command.error('--seed goes with --probability');
  const when =
    o.probability === undefined
      ? { times: o.times ?? 1 }
      : { probability: o.probability, ...(o.seed === undefined ? {} : { seed: o.seed }) };
  return { path: o.path, ...(o.method ? { method: o.method.toUpperCase() } : {}), fault: faults[0], ...when };
}

/** `faults api add`: one rule, its fault by exactly one fault flag. */
function addCommand(): Command {
  return new Command('add')
    .description(`Add a rule: matching /api/v1 requests get ${apiFaultKinds('named')}`)
    .requiredOption(
      '--path <path>',
      'a path under /api/v1; {id} or * stands for one segment, e.g. /api/v1/va-payments/{id}/cancel',
    )
    .option('--method <method>', 'POST, GET, PATCH, DELETE or * (default *)')
    .option(
      '--status <status>',
      'answer 500, 502, 503, 504 or 429 in the error envelope; nothing is carried out',
      positiveInt,
    )
    .option('--delay <ms>', 'carry the request out, answer that much later: 400, 400ms, 2s', milliseconds)
    .option('--reset', 'reset the connection with no answer; nothing is carried out')
    .addOption(
      new Option(
        '--hang [ms]',
        'no answer for that long (default 30s), or until the client closes; nothing is carried out',
      ).argParser(milliseconds),
    )
    .option('--lost-answer', 'carry the request out and commit it, then close the connection with no answer')
    .option('--times <n>', 'the next N matching requests (default 1)', positiveInt)
    .option(
      '--probability <p>',
      'each matching request with this probability, 0 to 1, drawn from the rule’s seeded generator',
      number,
    )
    .option(
      '--seed <n>',
      'where the generator starts (default 1): the same requests get the same faults on every run',
      number,
    )
    .action(apiAction<ApiFaultRuleView>((cmd) => ['POST', PATH, { body: ruleOf(cmd) }], ruleBlock));
}

/** `faults api list`: the rules as a table. */
function listCommand(): Command {
  return pageOptions(new Command('list'))
    .description('The rules, in the order they apply, with their hits')
    .action(
      listAction<ApiFaultRuleView>(
        (cmd) => ['GET', PATH, { query: cmd.opts() }],
        (rules) =>
          rules.length === 0
            ? 'no API fault rules'
            : table(rules, [
                ['ID', (r) => r.id],
                ['METHOD', (r) => r.method],
                ['PATH', (r) => r.path],
                ['FAULT', (r) => faultText(r.fault)],
                ['APPLIES', (r) => ruleWhen(r)],
                ['HITS', (r) => r.hits, 'right'],
              ]),
      ),
    );
}

/** `faults api clear [id]`: one rule, or all of them. */
function clearCommand(): Command {
  return new Command('clear')
    .description('Remove one rule by its id, or every rule')
    .argument('[id]', 'the rule to remove (all when left out)')
    .action(
      apiAction<ApiFaultRuleView | { deleted: number }>(
        (_cmd, id) => ['DELETE', id === undefined ? PATH : pathTo(PATH, id)],
        (data) =>
          'deleted' in data
            ? `removed ${data.deleted} API fault rule${data.deleted === 1 ? '' : 's'}`
            : `removed rule ${data.id}`,
      ),
    );
}

/** `faults api add|list|clear`: API fault rules of the account (contract part 7). */
export function faultsApiCommand(): Command {
  const command = new Command('api')
    .description(`Faults of the account's own /api/v1 requests: ${apiFaultKinds('many')}`)
    .addCommand(
      example(
        globalOptions(addCommand()),
        'va-sandbox faults api add --path /api/v1/va-payments --method POST --status 503',
        'va-sandbox faults api add --path /api/v1/va-payments --method POST --lost-answer --times 1',
        'va-sandbox faults api add --path "/api/v1/va-payments/{id}" --reset --probability 0.2 --seed 7',
      ),
    )
    .addCommand(example(globalOptions(listCommand()), 'va-sandbox faults api list'))
    .addCommand(
      example(
        globalOptions(clearCommand()),
        'va-sandbox faults api clear',
        'va-sandbox faults api clear 3d4e5f60-7a8b-4c9d-8e0f-1a2b3c4d5e6f',
      ),
    );
  return example(
    command,
    'va-sandbox faults api add --path /api/v1/va-payments --status 503',
    'va-sandbox faults api list',
  );
}
