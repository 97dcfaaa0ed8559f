// Seeds a data file for the benchmark through the sandbox's own core, in a process of its own:
//   node bench/seed.js --data DIR/state.json --key sk_bench --payments N [--pay | --mix] [--chunk K] [--ids FILE]
// It starts the real server on that file (port 0, loopback) and calls the account's methods, the same ones the
// HTTP routes call (createVaPayment, createTransfer), then commits the state like a route does after a write:
// every `--chunk` records and at the end. `--pay` follows each payment with a transfer that pays it in full; `--mix`
// pays every other one and gives each one of 100 payers' tax ids (`TAX_IDS`), for the filtered lists.
// Prints one JSON line: {payments, transfers, ms, error, closeError}; payments and transfers are what was committed
// (acknowledged, as a route would have answered), closeError what stopping the server said, if anything.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startServer } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string' },
    key: { type: 'string', default: 'sk_bench' },
    payments: { type: 'string', default: '100000' },
    pay: { type: 'boolean', default: false },
    mix: { type: 'boolean', default: false },
    chunk: { type: 'string', default: '0' },
    ids: { type: 'string' },
    body: { type: 'string' },
  },
});

const total = Number(values.payments);
const chunk = Number(values.chunk) || total;
const body = JSON.parse(values.body ?? '{"paymentHubId":1,"currency":"ARS","lockMode":"time","amount":1500}');
/** The payers' tax ids of `--mix`: `20` + 8 digits + a check digit 0 (not checked on a VA payment's clientTaxId). */
const taxId = (i) => `20${String(10_000_000 + (i % 100)).padStart(8, '0')}0`;
const started = performance.now();
const server = await startServer({ port: 0, host: '127.0.0.1', data: values.data });
const account = server.runtime.sandbox.account(values.key);
const ids = [];
const done = { payments: 0, transfers: 0, ms: 0, error: null, closeError: null };
let made = { payments: 0, transfers: 0 };
try {
  for (let i = 0; i < total; i++) {
    const payment = account.createVaPayment(values.mix ? { ...body, clientTaxId: taxId(i) } : body);
    ids.push(payment.id);
    made.payments++;
    if (values.pay || (values.mix && i % 2 === 0)) {
      account.createTransfer({ to: payment.cvu, total: body.amount });
      made.transfers++;
    }
    if ((i + 1) % chunk === 0 || i + 1 === total) {
      await server.runtime.commit();
      Object.assign(done, made);
      process.stderr.write(`[seed] ${done.payments} payments, ${done.transfers} transfers committed\n`);
    }
  }
} catch (error) {
  done.error = `${error.name}: ${error.message}`;
}
if (values.ids) writeFileSync(values.ids, ids.slice(0, done.payments).join('\n'));
if (!done.error) {
  try {
    await server.close();
  } catch (error) {
    done.closeError = `${error.name}: ${error.message}`;
  }
}
done.ms = Math.round(performance.now() - started);
process.stdout.write(`${JSON.stringify(done)}\n`);
// After a failed write or close the store may still hold timers or a half-done write: leave as a crash would.
process.exit(0);
