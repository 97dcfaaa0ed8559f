/** The error answers of the OpenAPI document: the envelope of each status, its codes and an example. */
import { z } from 'zod';
import { type ErrorCode, errorStatus } from '../../core/conventions/errors.js';
import { schemaOf } from './openapi-schemas.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable',
  429: 'Too many requests',
  500: 'Internal error',
  502: 'Bad gateway (an API fault rule)',
  503: 'Service unavailable (an API fault rule)',
  504: 'Gateway timeout (an API fault rule)',
  507: 'Insufficient storage',
};

/** The example error of each status. */
const ERROR_EXAMPLES: Record<number, [code: ErrorCode, message: string, details: string[]]> = {
  400: [
    'VALIDATION_ERROR',
    'Invalid request body: amount: Too small: expected number to be >0',
    ['amount: Too small: expected number to be >0'],
  ],
  401: ['UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <key>', []],
  403: [
    'HOST_NOT_ALLOWED',
    'Host evil.example is not allowed: use a loopback address or start with --allowed-host',
    [],
  ],
  404: ['NOT_FOUND', 'VA payment 6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b not found', []],
  405: ['METHOD_NOT_ALLOWED', 'DELETE is not allowed on /api/v1/va-payments', []],
  409: [
    'INVALID_STATE',
    'VA payment 6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b is completed: only a waiting or underpaid one can be cancelled',
    [],
  ],
  413: ['PAYLOAD_TOO_LARGE', 'Request body is larger than 1 MiB', []],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json, got text/plain', []],
  422: ['UNSUPPORTED_CURRENCY', 'Currency USD is not supported: only ARS', []],
  429: ['RATE_LIMIT_EXCEEDED', 'Rate limit of 6000 requests per minute exceeded', []],
  500: ['INTERNAL_ERROR', 'Internal error', []],
  502: ['BAD_GATEWAY', 'sandbox API fault 3d4e5f60-7a8b-4c9d-8e0f-1a2b3c4d5e6f', []],
  503: ['SERVICE_UNAVAILABLE', 'sandbox API fault 3d4e5f60-7a8b-4c9d-8e0f-1a2b3c4d5e6f', []],
  504: ['GATEWAY_TIMEOUT', 'sandbox API fault 3d4e5f60-7a8b-4c9d-8e0f-1a2b3c4d5e6f', []],
  507: ['INSUFFICIENT_STORAGE', 'The write could not be stored: nothing of it was kept', []],
};

/** The error envelope of one status, its `code` narrowed to the contract's codes of that status. */
export function errorResponse(status: number) {
  const codes = (Object.keys(errorStatus) as ErrorCode[]).filter((code) => errorStatus[code] === status);
  const envelope = z.strictObject({
    success: z.literal(false),
    error: z.strictObject({
      code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z.array(z.string()).describe('One "field: problem" per bad field'),
    }),
    timestamp: z.iso.datetime(),
    path: z.string(),
  });
  const [code, message, details] = ERROR_EXAMPLES[status]!;
  const example = {
    success: false,
    error: { code, message, details },
    timestamp: '2026-03-02T14:05:09.120Z',
    path: '/api/v1/va-payments',
  };
  return {
    description: `${STATUS_TEXT[status]}: ${codes.join(', ')}`,
    ...(status === 429
      ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } }
      : {}),
    content: { 'application/json': { schema: schemaOf(envelope, 'output'), example } },
  };
}
