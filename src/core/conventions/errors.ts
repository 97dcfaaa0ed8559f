/** The closed set of error codes of the contract (part 0), with their HTTP status. */
export const errorStatus = {
  INVALID_JSON: 400,
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  HOST_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  INVALID_STATE: 409,
  TAX_ID_ALREADY_EXISTS: 409,
  AMOUNT_LOCK_CONFLICT: 409,
  IDEMPOTENCY_KEY_CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNSUPPORTED_CURRENCY: 422,
  DEDICATED_CVUS_DISABLED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  /** 502, 503 and 504 come only from an API fault rule (contract part 7). */
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
  INSUFFICIENT_STORAGE: 507,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export class SandboxError extends Error {
  override readonly name = 'SandboxError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: string[] = [],
  ) {
    super(message);
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

export const notFound = (what: string, id: string) => new SandboxError('NOT_FOUND', `${what} ${id} not found`);

/**
 * What `read` gives, or null when a record it reads is damaged (the store's `INTERNAL_ERROR` naming it): for the
 * deliverer, which never sends what it cannot read, and must not stop the account's other callbacks nor fail the write
 * whose commit started it (a request that reads the record answers the error).
 */
export function unlessDamaged<T>(read: () => T): T | null {
  try {
    return read();
  } catch (error) {
    if (isDamaged(error)) return null;
    throw error;
  }
}

/** The store's refusal of a damaged record. */
export const isDamaged = (error: unknown): boolean => error instanceof SandboxError && error.code === 'INTERNAL_ERROR';
