/** The `webhooks` of the OpenAPI document: the callbacks the sandbox sends. */
import { z } from 'zod';
import { CALLBACK_EXAMPLES, CALLBACK_REFERENCE, CALLBACK_SCHEMAS } from '../../core/callbacks/callbacks.js';
import { callbackHeaders } from '../../core/callbacks/deliveries.js';
import { EVENT_TYPES } from '../../core/records/state.js';

/**
 * `webhooks`: each callback the sandbox sends (the seven VA events and `client.cashin`), its body's schema made from
 * the zod schema the tests parse every received body with, its headers and an example.
 */
export function webhooks() {
  return Object.fromEntries(
    EVENT_TYPES.map((eventType) => {
      const { sent, routed } = CALLBACK_REFERENCE[eventType];
      const example = CALLBACK_EXAMPLES[eventType] as { eventId: string };
      const headers = Object.entries(callbackHeaders({ id: example.eventId, eventType }))
        .filter(([name]) => name !== 'Content-Type')
        .map(([name, value]) => ({
          name,
          in: 'header',
          required: true,
          schema: name === 'X-Service-Event-Id' ? { type: 'string', format: 'uuid' } : { const: value },
          example: value,
        }));
      const { $schema: _dialect, ...schema } = z.toJSONSchema(CALLBACK_SCHEMAS[eventType], { io: 'output' }) as Record<
        string,
        unknown
      >;
      const operation = {
        operationId: `callback_${eventType.replace('.', '_')}`,
        summary: `${eventType}: sent when ${sent}`,
        description:
          `Sent when ${sent}. Goes to ${routed}. A POST with this JSON body; a 2xx answer confirms it, anything else is ` +
          'retried (3 attempts, 5 s and 25 s apart by the sandbox clock) with the same eventId: deduplicate by it.',
        tags: ['Callbacks'],
        parameters: headers,
        requestBody: { required: true, content: { 'application/json': { schema, example } } },
        responses: { '200': { description: 'Any 2xx confirms the delivery; answer fast and do the work after' } },
      };
      return [eventType, { post: operation }];
    }),
  );
}
