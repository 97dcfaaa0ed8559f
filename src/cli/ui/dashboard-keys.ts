import { useApp } from 'ink';
import type { VaPaymentView } from '../../core/records/views.js';
import { type Mode, PANES, type PaneName } from './dashboard-body.js';
import { transferTargetOf } from './dashboard-state.js';
import { deliveryOf, type FeedEntry } from './feed.js';
import { cancelForm, clientForm, clockForm, paymentForm, redeliverForm, transferForm } from './forms.js';
import { useKeys } from './keys.js';
import type { Layout } from './layout.js';
import type { ClientView } from './use-sandbox.js';

/** What the panes' keys read and change. */
export interface PaneKeysState {
  mode: Mode;
  setMode: (mode: Mode) => void;
  focus: PaneName;
  setFocus: (change: (now: PaneName) => PaneName) => void;
  layout: Layout;
  /** Moves the focused pane's selection by `step` rows (±Infinity: to an end). */
  move: (step: number) => void;
  setSelected: (change: (now: { payments: number; clients: number }) => { payments: number; clients: number }) => void;
  setNote: (note: { text: string; error?: boolean }) => void;
  setCreated: (payment: VaPaymentView) => void;
  hubId: number;
  payment: VaPaymentView | undefined;
  clientRow: ClientView | undefined;
  feedEntry: FeedEntry | undefined;
}

/** The dashboard's keys while the panes show (an open form or delivery takes its own keys; q quits from anywhere but a form). */
export function usePaneKeys(state: PaneKeysState): void {
  const { exit } = useApp();
  const { mode, setMode, focus, setFocus, layout, move, setSelected, setNote, hubId, payment } = state;
  const selectedDelivery = () => {
    const delivery = focus === 'feed' && state.feedEntry ? deliveryOf(state.feedEntry.message) : null;
    if (delivery === null) setNote({ text: 'select a delivery first: tab to the feed, then the arrows', error: true });
    return delivery;
  };
  useKeys(
    (input, key) => {
      if (input === 'q') return exit();
      if (mode.kind !== 'panes') return; // the open view takes its own keys
      const pane = focus === 'feed' ? layout.feed : focus === 'payments' ? layout.payments : layout.clients;
      if (key.tab) setFocus((now) => PANES[(PANES.indexOf(now) + (key.shift ? PANES.length - 1 : 1)) % PANES.length]!);
      else if (key.upArrow || input === 'k') move(-1);
      else if (key.downArrow || input === 'j') move(1);
      else if (key.pageUp) move(-pane);
      else if (key.pageDown) move(pane);
      else if (key.home || input === 'g') move(-Infinity);
      else if (key.end || input === 'G') move(Infinity);
      // What was just created is the newest: it gets selected, so the next key acts on it.
      else if (input === 'n')
        setMode({
          kind: 'form',
          spec: paymentForm({ hubId, onCreated: state.setCreated }),
          then: () => setSelected((now) => ({ ...now, payments: 0 })),
        });
      else if (input === 'c')
        setMode({ kind: 'form', spec: clientForm(hubId), then: () => setSelected((now) => ({ ...now, clients: 0 })) });
      else if (input === 't')
        setMode({
          kind: 'form',
          spec: transferForm(transferTargetOf(focus === 'clients' ? state.clientRow : undefined, payment)),
        });
      else if (input === 'a') setMode({ kind: 'form', spec: clockForm() });
      else if (input === 'x') {
        if (payment) setMode({ kind: 'form', spec: cancelForm(payment) });
        else setNote({ text: 'no VA payment selected', error: true });
      } else if (input === 'r' || key.return || input === 'o') {
        const delivery = selectedDelivery();
        if (delivery !== null)
          setMode(
            input === 'r' ? { kind: 'form', spec: redeliverForm(delivery) } : { kind: 'delivery', id: delivery.id },
          );
      }
    },
    { isActive: mode.kind !== 'form' },
  );
}
