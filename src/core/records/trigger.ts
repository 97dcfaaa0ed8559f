import { z } from 'zod';
import { money } from '../conventions/index.js';
import { httpUrl, hubId } from './fields.js';
import { uuid } from './view-fields.js';
import { EVENT_TYPES } from './words.js';

/** Contract part 9: `POST /sandbox/v1/triggers`, one event made through the operations a user would call. */

/** Every event a trigger makes: the seven VA events and `client.cashin`. */
export const TRIGGER_EVENTS = EVENT_TYPES;
export type TriggerEvent = (typeof TRIGGER_EVENTS)[number];

/** The amount a trigger's payment asks for (and its client's transfer pays) when none is given. */
const DEFAULT_TRIGGER_AMOUNT = 1500;

export const triggerSchema = z.strictObject({
  event: z.enum(TRIGGER_EVENTS, { error: `must be one of: ${TRIGGER_EVENTS.join(', ')}` }),
  callbackUrl: httpUrl
    .nullish()
    .describe("Where the callbacks go: the payment's callbackUrl, or the client's cashinCallbackUrl"),
  amount: money().default(DEFAULT_TRIGGER_AMOUNT * 100),
  paymentHubId: hubId.default(1),
});
export type TriggerInput = z.output<typeof triggerSchema>;

export const triggerViewSchema = z.strictObject({
  event: z.enum(TRIGGER_EVENTS),
  eventId: uuid.describe("The triggered event's id: its callback's X-Service-Event-Id"),
  vaPaymentId: uuid.optional(),
  clientId: uuid.optional(),
  steps: z.array(z.string()).describe('What was done, in order: each an operation a user could call'),
});
export type TriggerView = z.output<typeof triggerViewSchema>;
