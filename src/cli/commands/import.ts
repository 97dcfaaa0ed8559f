import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { contextOf, example, given, globalOptions } from '../context.js';
import { progressWanted, sandboxProgress, withProgress } from '../progress.js';

interface Imported {
  imported: boolean;
  clock: { now: string };
  counts: Record<string, number>;
}

/** `import <file>`: replaces the account's whole state with an export; the account's clock reads the export's time. */
export function importCommand(): Command {
  const command = new Command('import')
    .description(
      "Replace the account's whole state with an export file (- reads stdin); its callbacks are then held, never sent to the file's URLs, until deliveries release",
    )
    .argument('<file>', 'a file written by va-sandbox export')
    .action(async (file: string, _opts, cmd: Command) => {
      const { client, out } = contextOf(cmd);
      const text = await (file === '-' ? readStdin() : readFile(file, 'utf8')).catch((error: NodeJS.ErrnoException) => {
        throw new Error(`cannot read ${file}: ${error.code ?? error.message}`);
      });
      let doc: unknown;
      try {
        doc = JSON.parse(text);
      } catch (error) {
        throw new Error(`${file} is not JSON: ${(error as Error).message}`);
      }
      const importing = client.call<Imported>('POST', '/sandbox/v1/import', { body: doc });
      const { data } = await withProgress(
        progressWanted(given<boolean>(cmd, 'json') === true),
        sandboxProgress(client),
        importing,
      );
      const counts = Object.entries(data.counts)
        .map(([name, n]) => `${n} ${name}`)
        .join(', ');
      out.result(
        data,
        () =>
          `imported ${counts}; the sandbox clock reads ${data.clock.now}\ncallbacks are held until \`va-sandbox deliveries release\` (new ones go to the forwarding URL while one is set)`,
      );
    });
  return example(
    globalOptions(command),
    'va-sandbox import incident.json',
    'va-sandbox --api-key sk_repro import incident.json',
  );
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
