// Seeds a data file for the benchmark through the sandbox's own core, in a process of its own (run it as
// `node ...SEED_ARGS`, see lib.js):
//   node bench/seed.js --data DIR/state.json --key sk_bench --payments N [--pay | --mix] [--ids FILE] [--kill [--tail N]]
// It starts the real server on that file (port 0, loopback) and calls the account's methods, the same ones the
// HTTP routes call (createVaPayment, createTransfer), then commits the state once, as a route does after a write.
// One commit, not one per chunk: each commit that outgrows a quarter of the snapshot starts a fold that rewrites the
// whole state, and later commits wait for it, so committing in chunks rewrote the state over and over as it grew; one
// commit writes the journal once and the stop folds once. `--pay` follows each payment with a transfer that pays it
// in full; `--mix` pays every other one and gives each one of 100 payers' tax ids (`taxId`), for the filtered lists.
// Prints one JSON line: {payments, transfers, ms, error, closeError}; payments and transfers are what was committed
// (acknowledged, as a route would have answered), closeError what stopping the server said, if anything. `--kill`:
// right after the last commit is acknowledged (and the line printed) the process SIGKILLs itself, so the files are
// left as a crash leaves them; the bench times the next start from them. `--tail N`: after that one commit, N more
// payments committed 1,000 at a time, as a server taking creates commits them: the journal a start replays.
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
    ids: { type: 'string' },
    kill: { type: 'boolean', default: false },
    tail: { type: 'string', default: '0' },
    body: { type: 'string' },
  },
});

const total = Number(values.payments);
const tail = Number(values.tail);
const body = JSON.parse(values.body ?? '{"paymentHubId":1,"currency":"ARS","lockMode":"time","amount":1500}');
/** The payers' tax ids of `--mix`: `20` + 8 digits + a check digit 0 (not checked on a VA payment's clientTaxId). */
const taxId = (i) => `20${String(10_000_000 + (i % 100)).padStart(8, '0')}0`;
const started = performance.now();
const server = await startServer({ port: 0, host: '127.0.0.1', data: values.data });
const account = server.runtime.sandbox.account(values.key);
const ids = [];
const done = { payments: 0, transfers: 0, ms: 0, error: null, closeError: null };
try {
  let transfers = 0;
  for (let i = 0; i < total; i++) {
    const payment = account.createVaPayment(values.mix ? { ...body, clientTaxId: taxId(i) } : body);
    ids.push(payment.id);
    if (values.pay || (values.mix && i % 2 === 0)) {
      account.createTransfer({ to: payment.cvu, total: body.amount });
      transfers++;
    }
  }
  await server.runtime.commit();
  // The tail: more payments, a commit per 1,000 as a server taking creates would make, left in the journal.
  for (let i = 0; i < tail; i++) {
    ids.push(account.createVaPayment(body).id);
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
