import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { Form, type FormSpec, type Values } from '../src/cli/ui/form.js';
import { cancelForm, clientForm, clockForm, paymentForm, redeliverForm, transferForm } from '../src/cli/ui/forms.js';
import { SandboxApiError } from '../src/client/api-client.js';
import {
  clockAdvanceSchema,
  createClientSchema,
  createVaPaymentSchema,
  transferSchema,
} from '../src/core/records/schemas.js';
import type { VaPaymentView } from '../src/core/records/views.js';
import { eventually } from './helpers.js';
import { KEY, keyboard } from './ui-helpers.js';

const { enter: ENTER, tab: TAB, down: DOWN, right: RIGHT, backspace: BACKSPACE, esc: ESC, ctrlU: CTRL_U } = KEY;

/**
 * A form on a fake terminal. `keys` writes each key as its own chunk, as a person types; `sent` holds each body
 * the form submitted; `answer` decides what the request does (default: succeeds).
 */
async function useForm(
  spec: FormSpec,
  answer: (body: Record<string, unknown>) => Promise<void> = async () => {},
  sticky?: Values,
) {
  const sent: Record<string, unknown>[] = [];
  let cancelled = 0;
  const form = render(
    <Form
      spec={spec}
      sticky={sticky}
      width={100}
      rows={14}
      onSubmit={(body) => (sent.push(body), answer(body))}
      onCancel={() => cancelled++}
    />,
  );
  /** The error line under a field, if any. */
  const errorOf = (field: string) => {
    const lines = (form.lastFrame() ?? '').split('\n');
    const at = lines.findIndex((line) => new RegExp(`^[> ] ${field}( |$)`).test(line));
    return at < 0 ? undefined : /^ +! (.*)$/.exec(lines[at + 1] ?? '')?.[1];
  };
  return {
    sent,
    cancelled: () => cancelled,
    frame: () => form.lastFrame() ?? '',
    keys: keyboard(form),
    errorOf,
    /** Waits for this error under the field (ink renders after the key), or fails saying what is there. */
    async expectError(field: string, expected: string | RegExp) {
      const matches = (error = errorOf(field)) =>
        error !== undefined && (typeof expected === 'string' ? error === expected : expected.test(error));
      await eventually(() => matches(), 10_000).catch(() => expect(errorOf(field)).toMatch(expected));
    },
    /** The bodies sent, once one was. */
    submitted: () => eventually(() => (sent.length > 0 ? sent : null), 10_000, 'the form to send'),
  };
}

describe("forms validate with the API's own schemas", () => {
  it('each form that sends a body is judged by the schema that validates that request', () => {
    expect(paymentForm().schema).toBe(createVaPaymentSchema);
    expect(clientForm().schema).toBe(createClientSchema);
    expect(transferForm(null).schema).toBe(transferSchema);
    expect(clockForm().schema).toBe(clockAdvanceSchema);
  });
});

describe('new VA payment form', () => {
  it("shows every bad field inline with the schema's words, and sends nothing", async () => {
    const form = await useForm(paymentForm());
    // amount with 3 decimals; lockMode amount; ttlSeconds 0; callbackUrl not http(s).
    await form.keys(
      ...'1500.001',
      TAB,
      RIGHT,
      TAB,
      BACKSPACE,
      BACKSPACE,
      BACKSPACE,
      BACKSPACE,
      '0',
      TAB,
      ...'ftp://shop.test/cb',
      ENTER,
    );
    await form.expectError('amount', 'must have at most 2 decimals');
    await form.expectError('ttlSeconds', />=\s?1/);
    await form.expectError('callbackUrl', 'must be an http(s) URL');
    expect(form.errorOf('externalReference')).toBeUndefined();
    expect(form.sent).toEqual([]);
  });

  it('names a field another one requires', async () => {
    const form = await useForm(paymentForm());
    await form.keys(TAB, RIGHT, ENTER);
    expect(form.frame()).toContain('[amount]');
    await form.expectError('amount', 'is required with lockMode "amount"');
    await form.keys(TAB, TAB, TAB, TAB, TAB, TAB, ...'abc', ENTER);
    await form.expectError('amount', 'Invalid input: expected number, received string');
  });

  it('sends the body as the API takes it (ARS, not cents) once it is valid, and keeps the callback URL for next time', async () => {
    const form = await useForm(paymentForm(), async () => {}, { callbackUrl: 'http://127.0.0.1:9000/cb' });
    expect(form.frame()).toContain('http://127.0.0.1:9000/cb');
    await form.keys(...'99.9', TAB, RIGHT, RIGHT, TAB, TAB, TAB, ...'order-17', ENTER);
    expect(await form.submitted()).toEqual([
      {
        amount: 99.9,
        lockMode: 'amount_and_time',
        ttlSeconds: 1800,
        callbackUrl: 'http://127.0.0.1:9000/cb',
        externalReference: 'order-17',
        currency: 'ARS',
        paymentHubId: 1,
      },
    ]);
  });

  it('shows what the API refused: by field when it names one, whole otherwise', async () => {
    const conflict = new SandboxApiError(
      409,
      'AMOUNT_LOCK_CONFLICT',
      'An active amount-locked VA payment already waits for ARS 1500.00',
      [],
    );
    const form = await useForm(paymentForm(), async () => {
      throw conflict;
    });
    await form.keys(...'1500', TAB, RIGHT, ENTER);
    await eventually(() =>
      form.frame().includes('AMOUNT_LOCK_CONFLICT: An active amount-locked VA payment already waits'),
    );
    const named = await useForm(paymentForm(), async () => {
      throw new SandboxApiError(400, 'VALIDATION_ERROR', 'Invalid request body', [
        'externalReference: must be at most 255 characters',
      ]);
    });
    await named.keys(ENTER);
    await named.expectError('externalReference', 'must be at most 255 characters');
  });
});

describe('new client form', () => {
  it('checks name, taxId and cashinCallbackUrl inline', async () => {
    const form = await useForm(clientForm());
    await form.keys(TAB, TAB, ...'not a url', ENTER);
    await form.expectError('name', /expected string/);
    await form.expectError('taxId', /expected string/);
    await form.expectError('cashinCallbackUrl', 'must be an http(s) URL');
    await form.keys(TAB, TAB, ...'Ana Pérez', TAB, ...'20-12346', TAB, CTRL_U, ENTER);
    // Ctrl-U emptied cashinCallbackUrl: an empty field is left out of the body.
    expect(await form.submitted()).toEqual([{ name: 'Ana Pérez', taxId: '20-12346', paymentHubId: 1 }]);
  });
});

describe('transfer form', () => {
  it('is filled in from the selected VA payment, and refuses taxes that are not less than the total', async () => {
    const form = await useForm(transferForm({ to: 'SOL.RIO.PAMPA', about: 'VA payment 9b2f (waiting)', total: 1500 }));
    expect(form.frame()).toContain('to VA payment 9b2f (waiting)');
    await form.keys(DOWN, DOWN, BACKSPACE, ...'1500', ENTER);
    await form.expectError('taxes', 'must be less than total');
    await form.keys(BACKSPACE, BACKSPACE, BACKSPACE, BACKSPACE, ...'30', ENTER);
    expect(await form.submitted()).toEqual([{ to: 'SOL.RIO.PAMPA', total: 1500, taxes: 30 }]);
  });

  it('takes keys that came in one chunk one at a time (a paste, a fast terminal)', async () => {
    const form = await useForm(transferForm(null));
    await form.keys(`SOL.RIO.PAMPA${TAB}250${TAB}${BACKSPACE}5${ENTER}`);
    expect(await form.submitted()).toEqual([{ to: 'SOL.RIO.PAMPA', total: 250, taxes: 5 }]);
  });
});

describe('clock form', () => {
  it('takes seconds or a duration, and says what is wrong with anything else', async () => {
    const form = await useForm(clockForm());
    await form.keys(...'2 hours', ENTER);
    await form.expectError('seconds', 'must be seconds or a duration like 90s, 15m, 2h or 1h30m');
    await form.keys(CTRL_U, '0', ENTER);
    await form.expectError('seconds', />=\s?1/);
    await form.keys(BACKSPACE, ...'1h30m', ENTER);
    expect(await form.submitted()).toEqual([{ seconds: 5400 }]);
  });
});

describe('confirmations', () => {
  const payment = {
    id: '9b2f6c1e-6a4e-4c1b-9a57-0f3b2d1c8e4a',
    status: 'waiting',
    amount: 1500,
    alias: 'SOL.RIO.PAMPA',
  } as VaPaymentView;

  it('cancel says which VA payment it cancels; enter does it, esc does not', async () => {
    const form = await useForm(cancelForm(payment));
    expect(form.frame()).toContain('9b2f6c1e-6a4e-4c1b-9a57-0f3b2d1c8e4a');
    expect(form.frame()).toContain('waiting, ARS 1500.00, SOL.RIO.PAMPA');
    await form.keys(ESC);
    expect(form.cancelled()).toBe(1);
    await form.keys(ENTER);
    expect(await form.submitted()).toEqual([{}]);
  });

  it('redeliver says which delivery, of which event, to which URL', async () => {
    const form = await useForm(
      redeliverForm({ id: 'd-1', eventType: 'succeeded', url: 'http://127.0.0.1:9000/cb', status: 'failed' }),
    );
    expect(form.frame()).toContain('succeeded to http://127.0.0.1:9000/cb, failed');
    await form.keys(ENTER);
    expect(await form.submitted()).toHaveLength(1);
  });
});
