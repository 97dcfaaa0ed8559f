// The account page's incident file card: the account's export downloaded, a file imported after a confirmation.
import { type DragEvent, useState } from 'react';
import type { Api } from '../api.js';
import { ErrorNote, useAction, useApp } from '../ui.js';

type Counts = Record<string, number>;
const COUNTED: [name: string, one: string, many: string][] = [
  ['vaPayments', 'VA payment', 'VA payments'],
  ['clients', 'client', 'clients'],
  ['transfers', 'transfer', 'transfers'],
  ['events', 'event', 'events'],
  ['deliveries', 'delivery', 'deliveries'],
  ['entries', 'ledger entry', 'ledger entries'],
  ['invoices', 'invoice', 'invoices'],
];
const countsText = (counts: Counts) =>
  COUNTED.map(([name, one, many]) => `${counts[name] ?? 0} ${counts[name] === 1 ? one : many}`).join(', ');

/** Saves what a GET of `path` answers (its `data`) as a JSON file named by `name`. */
const useSave = (api: Api, path: string, name: (data: { exportedAt?: string }) => string) =>
  useAction(async () => {
    const response = await api.send('GET', path);
    if (!response.ok) throw new Error(`${path} answered ${response.status}`);
    const data = (await response.json()).data as { exportedAt?: string };
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([`${JSON.stringify(data, null, 2)}\n`], { type: 'application/json' }));
    link.download = name(data);
    link.click();
    URL.revokeObjectURL(link.href);
  });

/** Imports a file into the account once the user confirms what it holds (checked and counted by the server first). */
const useImport = (api: Api, setResult: (result: string | null) => void, reloadAll: () => void) =>
  useAction(async (file: File) => {
    setResult(null);
    const text = await file.text();
    try {
      JSON.parse(text);
    } catch {
      throw new Error(
        `${file.name} is not JSON: an incident file is what "Download export" (or va-sandbox export) writes`,
      );
    }
    // The server checks the file as an import would (format, version, every record), and counts it: a bad file
    // gets its errors here, never the confirmation.
    const checked = await api.import(text, { dryRun: true });
    const question = `Replace everything in account "${api.key}" with ${file.name}?\n\nIt holds ${countsText(checked.counts)}, exported at ${'exportedAt' in checked ? checked.exportedAt : ''}.\n\nWhat the account holds now is lost.`;
    if (!confirm(question)) return;
    const imported = await api.import(text);
    setResult(
      `Imported ${file.name}: ${countsText(imported.counts)}. Its callbacks are held, never sent to the file's URLs, until you release them (Deliveries).`,
    );
    reloadAll();
  });

/** The account's export, downloaded as a file; a file (picked or dropped) imported after a confirmation. */
export function IncidentFile() {
  const { api, reloadAll } = useApp();
  const [dragging, setDragging] = useState(false);
  const [result, setResult] = useState<string | null>(null);
  const download = useSave(
    api,
    '/sandbox/v1/export',
    (doc) => `va-sandbox-${api.key}-${doc.exportedAt!.replace(/[:.]/g, '-')}.json`,
  );
  const record = useSave(api, '/sandbox/v1/scenario', () => `va-sandbox-${api.key}-scenario.json`);
  const load = useImport(api, setResult, reloadAll);
  const drop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    const file = event.dataTransfer.files[0];
    if (file) void load.run(file);
  };
  return (
    <section className="card" aria-labelledby="incident-title">
      <h2 id="incident-title">Incident file</h2>
      <p className="muted">
        The account's whole state as one JSON file, as `va-sandbox export` writes it: send it with a bug report, load it
        to see the same story.
      </p>
      <div className="actions">
        <button type="button" onClick={() => void download.run()} disabled={download.busy}>
          Download export
        </button>
        <button
          type="button"
          onClick={() => void record.run()}
          disabled={record.busy}
          title="The account's story as a scenario file: va-sandbox run replays it on a fresh account"
        >
          Save as scenario
        </button>
      </div>
      <ErrorNote error={download.error ?? record.error} />
      <div
        className={`drop-zone${dragging ? ' dragging' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={drop}
      >
        <label htmlFor="incident-file">Load an incident file (or drop it here)</label>
        <input
          id="incident-file"
          type="file"
          accept="application/json,.json"
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (file) void load.run(file);
            event.target.value = '';
          }}
        />
      </div>
      {result ? <p role="status">{result}</p> : null}
      <ErrorNote error={load.error} />
    </section>
  );
}
