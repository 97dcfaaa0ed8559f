import { EventEmitter } from 'node:events';
import { render } from 'ink';
import { z } from 'zod';
import { connect, dataPathOf } from './connect.js';
import { Dashboard } from './dashboard.js';

/** The options of `va-sandbox ui`: where the sandbox is (the global --url and --api-key) and this CLI's version. */
const uiOptionsSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  apiKey: z.string().min(1, 'must not be empty'),
  hubId: z.number().int().min(1).default(1),
  version: z.string(),
});
export type UiOptions = z.input<typeof uiOptionsSchema>;

/** The alternate screen: the dashboard draws on its own page, and the shell's page comes back as it was on quit. */
const ENTER_SCREEN = '\x1b[?1049h';
const LEAVE_SCREEN = '\x1b[?1049l';

/** Ctrl-C in the dashboard is a key (ink quits on it); these come from outside, and quit as cleanly. */
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Runs the dashboard until `q` (or Ctrl-C); a sandbox it started stops with it, its state saved. */
export async function runUi(
  options: UiOptions,
  io: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream } = process,
): Promise<void> {
  const parsed = uiOptionsSchema.safeParse(options);
  if (!parsed.success)
    throw new Error(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
  const { url, apiKey, hubId, version } = parsed.data;
  if (!io.stdin.isTTY || !io.stdout.isTTY)
    throw new Error('ui is interactive: run it in a terminal (stdin and stdout must be one)');
  const logs = new EventEmitter();
  const connection = await connect(url, apiKey, { version, log: (line) => logs.emit('line', line) });
  io.stdout.write(ENTER_SCREEN);
  const app = render(<Dashboard connection={connection} hubId={hubId} logs={logs} />, {
    stdin: io.stdin,
    stdout: io.stdout,
    patchConsole: false,
  });
  const stop = () => app.unmount();
  for (const signal of SIGNALS) process.once(signal, stop);
  try {
    await app.waitUntilExit();
  } finally {
    for (const signal of SIGNALS) process.off(signal, stop);
    io.stdout.write(LEAVE_SCREEN);
    if (connection.embedded) {
      await connection.embedded.close();
      io.stdout.write(
        `va-sandbox ui: stopped the sandbox it started; its state is in ${dataPathOf(connection.embedded)}\n`,
      );
    }
  }
}
