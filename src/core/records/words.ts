/**
 * The contract's words for the states and kinds of records, as plain lists (no zod): the record schemas make their
 * enums of them, and the CLI lists them in its help without loading a schema.
 */
export const CVU_STATUSES = ['not_provisioned', 'provisioning', 'active', 'provisioning_failed', 'disabled'] as const;
export type CvuStatus = (typeof CVU_STATUSES)[number];
export const SOURCE_TYPES = ['payment_link', 'manual_deposit', 'other'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];
export const ENTRY_TYPES = ['cash_in', 'debit', 'credit', 'adjustment', 'reversal', 'invoice_allocation'] as const;
const VA_EVENT_TYPES = [
  'created',
  'cash_in_received',
  'succeeded',
  'underpaid',
  'overpaid',
  'failed',
  'cancelled',
] as const;
export type VaEventType = (typeof VA_EVENT_TYPES)[number];
export const EVENT_TYPES = [...VA_EVENT_TYPES, 'client.cashin'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed', 'dropped', 'held'] as const;
export const ATTEMPT_ERRORS = [
  'timeout',
  'connection_refused',
  'connection_reset',
  'redirect',
  'http_status',
  'network',
] as const;
export type AttemptError = (typeof ATTEMPT_ERRORS)[number];
export const CVU_PROVISIONINGS = ['inline', 'delayed', 'fail', 'manual'] as const;
export const INVOICE_TYPES = ['A', 'B', 'C'] as const;
export const PAYMENT_STATUSES = ['pending', 'partial', 'paid', 'cancelled'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];
export const VA_PAYMENT_STATUSES = ['waiting', 'underpaid', 'completed', 'overpaid', 'expired', 'cancelled'] as const;
export type VaPaymentStatus = (typeof VA_PAYMENT_STATUSES)[number];

/**
 * The API fault kinds (contract part 7), each with its words, said once: what one is called (`named`, `many`) and what
 * it does (`does`, the rule schema's description). The OpenAPI summary, the CLI and the web page read their lists of
 * kinds from here; test/api-fault-words.test.ts holds docs/api-faults.md's table and docs/api.md to it.
 */
export const API_FAULT_KINDS = {
  error: {
    named: 'an error status',
    many: 'error statuses',
    does: 'Answer with this status in the error envelope; nothing is carried out',
  },
  delay: { named: 'a delay', many: 'delays', does: 'Carry the request out; answer that many real ms later' },
  reset: { named: 'a reset', many: 'resets', does: 'Close the connection with no answer; nothing is carried out' },
  hang: {
    named: 'a hang',
    many: 'hangs',
    does: 'No answer for that long (or until the client closes), then close; nothing is carried out',
  },
  lost_answer: {
    named: 'a lost answer',
    many: 'lost answers',
    does: 'Carry the request out and commit it, then close the connection with no answer',
  },
} as const;
export type ApiFaultType = keyof typeof API_FAULT_KINDS;
export const API_FAULT_TYPES = Object.keys(API_FAULT_KINDS) as [ApiFaultType, ...ApiFaultType[]];

/**
 * The kinds in a phrase: `an error status, a delay, … or a lost answer` (`named`);
 * `error statuses, delays, …` (`many`).
 */
export function apiFaultKinds(words: 'named' | 'many'): string {
  const all = Object.values(API_FAULT_KINDS).map((kind) => kind[words]);
  return words === 'many' ? all.join(', ') : `${all.slice(0, -1).join(', ')} or ${all.at(-1)}`;
}
