// Creates through the core on a file store, in process (no HTTP): 32 a group commit, µs per create. What the store's
// schema costs a create, apart from the server around it. `node bench/store-creates.js [mode]` after `npm run build`:
// mode `as-is` (default), `no-count-triggers` (the count triggers dropped: counts then go wrong, the time is what they
// cost), `fewer-indexes` (six list indexes of payments and events dropped: what the lists' indexes cost a create).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

const ROOT = resolve(import.meta.dirname, '..');
const mode = process.argv[2] ?? 'as-is';
const CREATES = 20_000;
const { createSandbox, FakeClock, seededIds } = await import(join(ROOT, 'dist', 'core', 'index.js'));
const { fileStore } = await import(join(ROOT, 'dist', 'sandbox', 'store', 'database.js'));
const dir = mkdtempSync(join(tmpdir(), 'va-sandbox-store-creates-'));
const file = join(dir, 'state.db');
await fileStore(file).close();
const db = new DatabaseSync(file);
const drop = (type, names) => names.forEach((name) => void db.exec(`DROP ${type} ${name}`));
if (mode === 'no-count-triggers')
  drop(
    'TRIGGER',
    db
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE '%_counted_%'")
      .all()
      .map((row) => row.name),
  );
if (mode === 'fewer-indexes')
  drop('INDEX', [
    'va_payments_by_account',
    'va_payments_by_status',
    'va_payments_by_external_reference',
    'events_by_account',
    'events_by_source',
    'events_by_dropped',
  ]);
db.close();
const store = fileStore(file);
const account = createSandbox({
  storage: store,
  clock: new FakeClock(Date.parse('2026-11-21T12:00:00Z')),
  ids: seededIds(7),
}).account('sk_store');
const body = {
  paymentHubId: 1,
  currency: 'ARS',
  lockMode: 'time',
  amount: 1500,
  externalReference: 'order-1042',
  metadata: { source: 'bench' },
};
for (let i = 0; i < 500; i++) account.createVaPayment(body); // warm-up
await store.save();
const started = performance.now();
for (let i = 0; i < CREATES; i += 32) {
  for (let j = 0; j < 32; j++) account.createVaPayment(body);
  await store.save();
}
console.log(
  JSON.stringify({ mode, creates: CREATES, perCreateUs: Math.round(((performance.now() - started) * 1000) / CREATES) }),
);
await store.close();
rmSync(dir, { recursive: true, force: true });
