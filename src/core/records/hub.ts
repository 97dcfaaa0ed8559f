import { z } from 'zod';
import { alias, cvu, hubId, id, text, time } from './fields.js';
import { CVU_PROVISIONINGS } from './words.js';

export { CVU_PROVISIONINGS } from './words.js';

/** A payment hub (contract part 1) and a CVU of its pool, as stored. */

const cvuProvisioning = z.enum(CVU_PROVISIONINGS);

export const hubRecord = z.strictObject({
  id: hubId,
  name: text(255).min(1),
  brand: z.string().regex(/^[A-Za-z0-9]{1,10}$/, 'must be 1 to 10 letters or digits'),
  dedicated_client_cvus_enabled: z.boolean(),
  cvuProvisioning,
  /** The shared CVU that amount-locked payments collect on. */
  collectionCvu: cvu,
  collectionAlias: alias,
});
export type Hub = z.infer<typeof hubRecord>;

/** A CVU of the hub's pool, lent to one time-locked payment at a time. */
export const poolCvuRecord = z.strictObject({
  cvu,
  alias,
  vaPaymentId: id.nullable(),
  releasedAt: time.nullable(),
});
export type PoolCvu = z.infer<typeof poolCvuRecord>;
