import { ars, type Column, status } from '../render.js';
import { ListPane, type ListPaneProps } from './pane.js';
import type { ClientView } from './use-sandbox.js';

const columns: Column<ClientView>[] = [
  ['name', (c) => c.name],
  ['taxId', (c) => c.taxId],
  ['cvuStatus', (c) => status(c.cvuStatus)],
  ['balance', (c) => ars(c.balance), 'right'],
  ['alias', (c) => c.alias],
  ['id', (c) => c.id],
];

/** The clients pane: CVU status and balance of the clients that fit. */
export function ClientsPane(props: Omit<ListPaneProps<ClientView>, 'name' | 'columns' | 'empty'>) {
  return <ListPane {...props} name="clients" columns={columns} empty="no clients yet: c creates one" />;
}
