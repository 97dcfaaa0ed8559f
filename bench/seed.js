// Seeds a database for the benchmark through the sandbox's own core, in a process of its own (run it as
// `node ...SEED_ARGS`, see lib.js):
//   node bench/seed.js --data DIR/state.db --key sk_bench --payments N [--pay | --mix [--pay-every K]] [--ids FILE]
//                      [--kill [--tail N]] [--body JSON]
// It starts the real server on that database (port 0, loopback) and calls the account's parts, the same ones the
// HTTP routes call (vaPayments.createVaPayment, transfers.createTransfer), committing every 10,000 payments, as a route does after a write:
// each write goes into the open SQLite transaction, and a commit ends it. `--pay` follows each payment with a transfer that pays it in full; `--mix` pays every K-th one
// (`--pay-every`, default 2), gives each one of 100 payers' tax ids (`clientTaxId`) and an external reference of its
// own (`order-<i>`), for the filtered lists.
// Prints one JSON line: {payments, transfers, ms, makeMs, commitMs, error, closeError}; payments and transfers are what
// was committed (acknowledged, as a route would have answered), makeMs the core's time to make them, commitMs the
// commits' before the tail, closeError what stopping the server said, if anything. `--kill`: right after the last commit is
// acknowledged (and the line printed) the process SIGKILLs itself, so the database and its WAL are left as a crash
// leaves them; the bench times the next start from them. `--tail N`: after that one commit, N more payments
// committed 1,000 at a time, as a server taking creates commits them (the WAL then holds the last of those commits).
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
    'pay-every': { type: 'string', default: '2' },
    ids: { type: 'string' },
    kill: { type: 'boolean', default: false },
    tail: { type: 'string', default: '0' },
    body: { type: 'string' },
  },
});

const total = Number(values.payments);
const tail = Number(values.tail);
const payEvery = Number(values['pay-every']);
const body = JSON.parse(values.body ?? '{"paymentHubId":1,"currency":"ARS","lockMode":"time","amount":1500}');
/** The payers' tax ids of `--mix`: `20` + 8 digits + a check digit 0 (not checked on a VA payment's clientTaxId). */
const taxId = (i) => `20${String(10_000_000 + (i % 100)).padStart(8, '0')}0`;
const started = performance.now();
const server = await startServer({ port: 0, host: '127.0.0.1', data: values.data });
const account = server.runtime.sandbox.account(values.key);
const ids = [];
const done = { payments: 0, transfers: 0, ms: 0, makeMs: 0, commitMs: 0, error: null, closeError: null };
try {
  let transfers = 0;
  let commitMs = 0;
  const commit = async () => {
    const at = performance.now();
    await server.runtime.commit();
    commitMs += performance.now() - at;
  };
  for (let i = 0; i < total; i++) {
    const payment = account.vaPayments.createVaPayment(
      values.mix ? { ...body, clientTaxId: taxId(i), externalReference: `order-${i}` } : body,
    );
    ids.push(payment.id);
    if (values.pay || (values.mix && i % payEvery === 0)) {
      account.transfers.createTransfer({ to: payment.cvu, total: body.amount });
      transfers++;
    }
    if (i % 10_000 === 9_999) await commit();
  }
  await commit();
  done.commitMs = Math.round(commitMs);
  done.makeMs = Math.round(performance.now() - started - commitMs);
  // The tail: more payments, a commit per 1,000 as a server taking creates would make.
  for (let i = 0; i < tail; i++) {
    ids.push(account.vaPayments.createVaPayment(body).id);
    if (i % 1_000 === 999 || i === tail - 1) await server.runtime.commit();
  }
  Object.assign(done, { payments: ids.length, transfers });
  process.stderr.write(`[seed] ${done.payments} payments, ${done.transfers} transfers committed\n`);
} catch (error) {
  done.error = `${error.name}: ${error.message}`;
}
if (values.ids) writeFileSync(values.ids, ids.slice(0, done.payments).join('\n'));
const report = () => {
  done.ms = Math.round(performance.now() - started);
  process.stdout.write(`${JSON.stringify(done)}\n`);
};
if (values.kill) {
  report(); // to a pipe, so written before the next line runs (Linux)
  process.kill(process.pid, 'SIGKILL');
}
if (!done.error) {
  try {
    await server.close();
  } catch (error) {
    done.closeError = `${error.name}: ${error.message}`;
  }
}
report();
// After a failed write or close the store may still hold timers or a half-done write: leave as a crash would.
process.exit(0);
