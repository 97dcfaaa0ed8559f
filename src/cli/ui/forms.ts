import {
  clockAdvanceSchema,
  createClientSchema,
  createVaPaymentSchema,
  transferSchema,
} from '../../core/records/schemas.js';
import type { clientView, deliveryView, transferView, VaPaymentView } from '../../core/records/views.js';
import { pathTo } from '../context.js';
import { duration } from '../options.js';
import { ars } from '../render.js';
import type { FormSpec } from './form.js';

type DeliveryView = ReturnType<typeof deliveryView>;

/** A number field: digits become a JSON number; anything else goes as typed, for the schema to name. */
const number = (text: string): unknown => {
  const value = text.trim();
  if (value === '') return undefined;
  return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
};

const PAYMENTS = '/api/v1/va-payments';

/** `hubId`: the paymentHubId filled in (`--hub`); `onCreated` hears of the payment made, before the list is read again. */
export function paymentForm({
  hubId = 1,
  onCreated,
}: {
  hubId?: number;
  onCreated?: (payment: VaPaymentView) => void;
} = {}): FormSpec {
  return {
    title: 'New VA payment',
    fields: [
      { name: 'amount', parse: number, hint: 'ARS; empty: any amount (lockMode time)' },
      { name: 'lockMode', choices: ['time', 'amount', 'amount_and_time'] },
      { name: 'ttlSeconds', parse: number },
      { name: 'callbackUrl', hint: 'receives all seven events', sticky: true },
      { name: 'externalReference' },
      { name: 'currency', hint: 'only ARS is supported' },
      { name: 'paymentHubId', parse: number, hint: 'your hub id (--hub, VA_SANDBOX_HUB_ID)' },
    ],
    initial: { lockMode: 'time', ttlSeconds: '1800', currency: 'ARS', paymentHubId: String(hubId) },
    schema: createVaPaymentSchema,
    verb: 'create',
    async submit(client, body) {
      const { data } = await client.call<VaPaymentView>('POST', PAYMENTS, { body });
      onCreated?.(data);
      return `VA payment created: transfer ${data.amount === null ? 'any amount' : ars(data.amount)} to ${data.alias} (t does it)`;
    },
  };
}

export function clientForm(hubId = 1): FormSpec {
  return {
    title: 'New client',
    fields: [
      { name: 'name' },
      { name: 'taxId', hint: 'CUIT, e.g. 20-12345678-6' },
      { name: 'cashinCallbackUrl', hint: 'receives a POST for each transfer to its CVU', sticky: true },
      { name: 'paymentHubId', parse: number, hint: 'your hub id (--hub, VA_SANDBOX_HUB_ID)' },
    ],
    initial: { paymentHubId: String(hubId) },
    schema: createClientSchema,
    verb: 'create',
    async submit(client, body) {
      const { data } = await client.call<ReturnType<typeof clientView>>('POST', '/api/v1/clients', { body });
      return `client ${data.name} created: CVU ${data.cvu ?? '-'}, alias ${data.alias ?? '-'} (${data.cvuStatus})`;
    },
  };
}

/** Where a transfer goes, picked from the selected VA payment or client. */
export interface TransferTarget {
  /** CVU or alias. */
  to: string;
  /** What it is, for people: "VA payment 9b2f… (waiting)". */
  about: string;
  /** The total that pays it, when there is one. */
  total?: number;
}

export function transferForm(target: TransferTarget | null): FormSpec {
  return {
    title: 'Inject a transfer',
    about: [target ? `to ${target.about}` : 'to any CVU or alias: select a VA payment or client first to fill it in'],
    fields: [
      { name: 'to', hint: 'CVU or alias' },
      { name: 'total', parse: number, hint: 'gross ARS' },
      { name: 'taxes', parse: number, hint: 'withheld, less than total' },
    ],
    initial: { to: target?.to ?? '', total: target?.total === undefined ? '' : String(target.total), taxes: '0' },
    schema: transferSchema,
    verb: 'send',
    async submit(client, body) {
      const { data } = await client.call<ReturnType<typeof transferView>>('POST', '/sandbox/v1/transfers', { body });
      return `transfer of ${ars(data.total)} to ${data.to}: ${data.outcome}${data.reason ? ` (${data.reason})` : ''}`;
    },
  };
}

export function cancelForm(payment: VaPaymentView): FormSpec {
  return {
    title: 'Cancel VA payment',
    about: [
      payment.id,
      `${payment.status}, ${payment.amount === null ? 'any amount' : ars(payment.amount)}, ${payment.alias}`,
      'enter cancels it and releases its lock (event cancelled); esc keeps it',
    ],
    fields: [],
    verb: 'cancel it',
    async submit(client) {
      const { message } = await client.call<VaPaymentView>('POST', pathTo(PAYMENTS, payment.id, 'cancel'));
      return message ?? `VA payment ${payment.id} cancelled`;
    },
  };
}

export function clockForm(): FormSpec {
  return {
    title: 'Advance the sandbox clock',
    about: ['expiries and callback retries that fall due run before it answers'],
    fields: [{ name: 'seconds', parse: (value) => duration(value.trim()), hint: '90, 90s, 15m, 2h, 1h30m' }],
    schema: clockAdvanceSchema,
    verb: 'advance',
    async submit(client, body) {
      const { data } = await client.call<{ now: string; offsetSeconds: number }>('POST', '/sandbox/v1/clock/advance', {
        body,
      });
      return `clock advanced to ${data.now} (${data.offsetSeconds}s ahead)`;
    },
  };
}

export function redeliverForm(delivery: Pick<DeliveryView, 'id' | 'eventType' | 'url' | 'status'>): FormSpec {
  return {
    title: 'Redeliver',
    about: [
      `delivery ${delivery.id}`,
      `${delivery.eventType} to ${delivery.url ?? '(no URL)'}, ${delivery.status}`,
      'enter sends the event again, same eventId; esc goes back',
    ],
    fields: [],
    verb: 'redeliver',
    async submit(client) {
      const { data } = await client.call<DeliveryView>(
        'POST',
        pathTo('/sandbox/v1/deliveries', delivery.id, 'redeliver'),
      );
      return `redelivery ${data.id} of ${delivery.id} queued`;
    },
  };
}
