/**
 * The contract's words for the states and kinds of records, as plain lists (no zod): the record schemas make their
 * enums of them, and the CLI lists them in its help without loading a schema.
 */
export const CVU_STATUSES = ['not_provisioned', 'provisioning', 'active', 'provisioning_failed', 'disabled'] as const;
export type CvuStatus = (typeof CVU_STATUSES)[number];
export const SOURCE_TYPES = ['payment_link', 'manual_deposit', 'other'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];
export const ENTRY_TYPES = ['cash_in', 'debit', 'credit', 'adjustment', 'reversal', 'invoice_allocation'] as const;
const VA_EVENT_TYPES = ['created', 'cash_in_received', 'succeeded', 'underpaid', 'overpaid', 'failed', 'cancelled'] as const;
export type VaEventType = (typeof VA_EVENT_TYPES)[number];
export const EVENT_TYPES = [...VA_EVENT_TYPES, 'client.cashin'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed', 'dropped', 'held'] as const;
export const ATTEMPT_ERRORS = ['timeout', 'connection_refused', 'connection_reset', 'redirect', 'http_status', 'network'] as const;
export type AttemptError = (typeof ATTEMPT_ERRORS)[number];
export const CVU_PROVISIONINGS = ['inline', 'delayed', 'fail', 'manual'] as const;
export const INVOICE_TYPES = ['A', 'B', 'C'] as const;
export const PAYMENT_STATUSES = ['pending', 'partial', 'paid', 'cancelled'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];
export const VA_PAYMENT_STATUSES = ['waiting', 'underpaid', 'completed', 'overpaid', 'expired', 'cancelled'] as const;
export type VaPaymentStatus = (typeof VA_PAYMENT_STATUSES)[number];
