import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, PAYMENT, runCli, spawnCli, stored, useReceiver, useServer, useTmp } from './helpers.js';

/** A port something else listens on. */
const takenPort = async () => new URL((await useReceiver()).url).port;
const portTaken = (port: string) =>
  `va-sandbox: port ${port} on 127.0.0.1 is already in use; pick another with --port\n`;

describe('a start that fails (its port taken) leaves no file it created', () => {
  it('the default database: no .va-sandbox folder is left in the working folder', async () => {
    const port = await takenPort();
    const cwd = useTmp();
    const start = spawnCli(['start', '--port', port], {}, { cwd });
    expect(await start.exited).toBe(1);
    expect(start.stderr()).toBe(portTaken(port));
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('--data in folders that did not exist: none of them is left; in a folder that did: the folder stays, empty', async () => {
    const port = await takenPort();
    const dir = useTmp();
    const nested = await runCli(['start', '--port', port, '--data', join(dir, 'a', 'b', 'state.db')]);
    expect(nested).toMatchObject({ code: 1, stderr: portTaken(port) });
    expect(readdirSync(dir)).toEqual([]);

    mkdirSync(join(dir, 'kept'));
    expect((await runCli(['start', '--port', port, '--data', join(dir, 'kept', 'state.db')])).code).toBe(1);
    expect(readdirSync(join(dir, 'kept'))).toEqual([]);
  });

  it('a database that was there before is left whole, with what it held', async () => {
    const port = await takenPort();
    const data = join(useTmp(), 'state.db');
    const server = await useServer({ data }, 'test');
    const payment = await api(server.url, 'sk_start_failure').data('POST', '/api/v1/va-payments', {
      ...PAYMENT,
      amount: 10,
    });
    await server.close();
    expect((await runCli(['start', '--port', port, '--data', data])).code).toBe(1);
    expect(existsSync(data)).toBe(true);
    expect(existsSync(`${data}.lock`)).toBe(false);
    expect(Object.keys(stored(data, 'sk_start_failure').vaPayments)).toEqual([payment.id]);
  });
});
