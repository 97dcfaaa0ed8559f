import { z } from 'zod';
import {
  clientRecord,
  deliveryRecord,
  entryRecord,
  exportedEventRecord,
  hubRecord,
  idempotencyRecord,
  invoiceOfAnyRelease,
  poolCvuRecord,
  transferRecord,
  vaPaymentRecord,
} from '../records/index.js';

/**
 * The records of an account export (`account-export.ts`): each table's records as stored, held to their kind's one
 * schema (`records/`), so a field declared there is exported and imported with no line here; an event with its body.
 */
export { time } from '../records/index.js';

const table = <T extends z.ZodType>(record: T) => z.record(z.string(), record);

/** The account's records, without its clock offset (the export's `exportedAt` stands for it). */
export const exportedAccount = z.strictObject({
  hubs: table(hubRecord),
  pool: table(poolCvuRecord),
  vaPayments: table(vaPaymentRecord),
  transfers: table(transferRecord),
  events: table(exportedEventRecord),
  deliveries: table(deliveryRecord),
  idempotency: table(idempotencyRecord),
  clients: table(clientRecord),
  entries: table(entryRecord),
  invoices: table(invoiceOfAnyRelease),
});
