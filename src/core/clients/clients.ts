import { fromCents, iso, SandboxError } from '../conventions/index.js';
import {
  type Client,
  type CreateClientInput,
  type CvuStatus,
  type Hub,
  type SandboxEvent,
  type Transfer,
  taxIdDigits,
  type UpdateClientInput,
} from '../records/index.js';

export { taxIdDigits, taxIdKey } from '../records/index.js';

const PROVISIONING_DELAY_MS = 5000;

const CUIT_WEIGHTS = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2];

/** AFIP's CUIT check: 11 digits, the last one 11 minus the weighted sum mod 11 (11 reads 0; 10 never matches). */
export function isValidCuit(taxId: string): boolean {
  const digits = taxIdDigits(taxId);
  if (!/^\d{11}$/.test(digits)) return false;
  const sum = CUIT_WEIGHTS.reduce((acc, weight, i) => acc + weight * Number(digits[i]), 0);
  return (11 - (sum % 11)) % 11 === Number(digits[10]);
}

/** `--strict-tax-id`: a taxId must be a CUIT whose check digit matches. */
export function assertCuit(taxId: string): void {
  if (!isValidCuit(taxId)) {
    throw new SandboxError('VALIDATION_ERROR', `Invalid request body: taxId ${taxId} is not a valid CUIT`, [
      'taxId: must be a CUIT of 11 digits whose check digit matches (the server runs with --strict-tax-id)',
    ]);
  }
}

const aliasPart = (hint: string | null): string =>
  (hint ?? '')
    .normalize('NFD')
    .replace(/[^A-Za-z0-9-]/g, '')
    .toUpperCase();

/** The alias the hints ask for, `PREFIX.SUFFIX.BRAND` (generateAlias cuts it to 20 and makes it unique); undefined without hints. */
export function aliasBase(client: Client, brand: string): string | undefined {
  const parts = [aliasPart(client.aliasPrefixHint), aliasPart(client.aliasSuffixHint)].filter(Boolean);
  return parts.length === 0 ? undefined : [...parts, brand.toUpperCase()].join('.');
}

/**
 * A new client. `inline` and `delayed` hubs start it `provisioning` with its CVU due at `cvuReadyAt`
 * (`inline`: right away, so the account provisions it before answering); `fail` leaves it `provisioning_failed`;
 * `manual` leaves it `not_provisioned` until the sandbox's CVU switch moves it.
 */
export function createClient(input: CreateClientInput, ctx: { id: string; now: number; hub: Hub }): Client {
  const now = iso(ctx.now);
  const provisioning = ctx.hub.cvuProvisioning;
  const failed = provisioning === 'fail';
  const waits = failed || provisioning === 'manual';
  return {
    id: ctx.id,
    paymentHubId: ctx.hub.id,
    name: input.name,
    taxId: input.taxId,
    cashinCallbackUrl: input.cashinCallbackUrl ?? null,
    emails: input.emails ?? [],
    phones: input.phones ?? [],
    aliasPrefixHint: input.aliasPrefixHint ?? null,
    aliasSuffixHint: input.aliasSuffixHint ?? null,
    externalReference: input.externalReference ?? null,
    metadata: input.metadata ?? {},
    cvu: null,
    alias: null,
    cvuStatus: failed ? 'provisioning_failed' : provisioning === 'manual' ? 'not_provisioned' : 'provisioning',
    cvuReadyAt: waits ? null : iso(ctx.now + (provisioning === 'delayed' ? PROVISIONING_DELAY_MS : 0)),
    createdAt: now,
    updatedAt: now,
  };
}

/** A PATCH value: absent keeps the current one, null clears it to `cleared`. */
export const patched = <T>(value: T | null | undefined, current: T, cleared: T): T =>
  value === undefined ? current : (value ?? cleared);

/** The alias hints are kept for the record; an alias already provisioned does not change. */
export function updateClient(client: Client, patch: UpdateClientInput, now: string): Client {
  return {
    ...client,
    name: patch.name ?? client.name,
    taxId: patch.taxId ?? client.taxId,
    cashinCallbackUrl: patched(patch.cashinCallbackUrl, client.cashinCallbackUrl, null),
    emails: patched(patch.emails, client.emails, []),
    phones: patched(patch.phones, client.phones, []),
    aliasPrefixHint: patched(patch.aliasPrefixHint, client.aliasPrefixHint, null),
    aliasSuffixHint: patched(patch.aliasSuffixHint, client.aliasSuffixHint, null),
    externalReference: patched(patch.externalReference, client.externalReference, null),
    metadata: patched(patch.metadata, client.metadata, {}),
    updatedAt: now,
  };
}

/** The CVU is ready: the client gets it and its alias, and is `active`. */
export function provision(client: Client, address: { cvu: string; alias: string }, now: string): Client {
  return { ...client, ...address, cvuStatus: 'active', cvuReadyAt: null, updatedAt: now };
}

/**
 * The sandbox's switch (`POST /sandbox/v1/clients/{id}/cvu`) for a client that already has its CVU, to disable one, or
 * to mark a CVU not yet provisioned as requested (`provisioning`: it stays so until switched to `active`).
 */
export function setCvuStatus(
  client: Client,
  cvuStatus: Extract<CvuStatus, 'provisioning' | 'active' | 'disabled'>,
  now: string,
): Client {
  if (cvuStatus === 'provisioning' && client.cvu !== null) {
    throw new SandboxError('INVALID_STATE', `Client ${client.id} already has its CVU (cvuStatus ${client.cvuStatus})`, [
      'cvuStatus: provisioning is for a client without a CVU yet',
    ]);
  }
  return { ...client, cvuStatus, cvuReadyAt: null, updatedAt: now };
}

/** The `client.cashin` event of a transfer credited to an active client CVU: its body is spec 6.2, field for field. */
export function cashInEvent(client: Client, transfer: Transfer, eventId: string, now: string): SandboxEvent {
  const amount = fromCents(transfer.total - transfer.taxes);
  const body = {
    eventId,
    clientId: client.id,
    eventType: 'client.cashin',
    taxId: client.taxId,
    amount,
    total: fromCents(transfer.total),
    totalWithoutTaxes: amount,
    taxes: fromCents(transfer.taxes),
    currency: 'ARS',
    cvu: client.cvu,
    alias: client.alias,
    operationId: transfer.operationId,
    createdAt: now,
  };
  const url = client.cashinCallbackUrl;
  return {
    id: eventId,
    eventType: 'client.cashin',
    vaPaymentId: null,
    clientId: client.id,
    body,
    url,
    droppedReason: url === null ? 'the client has no cashinCallbackUrl' : null,
    createdAt: now,
  };
}
