/** The callback deliveries' operations: the delivery log, redelivery and release, forwarding, delivery faults and the live stream. */
import { faultsSchema, forwardingSchema, redeliverSchema } from '../../core/callbacks/delivery-settings.js';
import { listDeliveriesQuery } from '../../core/records/index.js';
import {
  deliveryDetailSchema,
  deliveryViewSchema,
  forwardingViewSchema,
  releasedSchema,
} from '../../core/records/views.js';
import { DELIVERIES, type Operation } from './openapi-operation.js';

export const DELIVERY_OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/sandbox/v1/deliveries',
    id: 'listDeliveries',
    summary: 'The delivery log, newest first',
    tag: DELIVERIES,
    query: listDeliveriesQuery,
    list: true,
    data: deliveryViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/deliveries/{id}',
    id: 'getDelivery',
    summary: 'One delivery with every attempt',
    tag: DELIVERIES,
    data: deliveryDetailSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/deliveries/{id}/redeliver',
    id: 'redeliver',
    summary: 'A new delivery of the same event (same eventId); `{"url"}` sends this one delivery there instead',
    tag: DELIVERIES,
    body: redeliverSchema,
    optionalBody: true,
    status: 201,
    errors: [409],
    data: deliveryDetailSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/deliveries/release',
    id: 'releaseDeliveries',
    summary:
      "Send every `held` delivery (an imported account's) as first attempts, to the forwarding URL if one is set, and end the account's hold: `{released}` counts them",
    tag: DELIVERIES,
    data: releasedSchema,
  },
  {
    method: 'post',
    path: '/sandbox/v1/deliveries/{id}/release',
    id: 'releaseDelivery',
    summary:
      'Send one `held` delivery as a first attempt; `{"url"}` sends it there instead (else the forwarding URL, else its own)',
    tag: DELIVERIES,
    body: redeliverSchema,
    optionalBody: true,
    errors: [409],
    data: deliveryDetailSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/forwarding',
    id: 'getForwarding',
    summary: "The account's forwarding URL (`url` null: off)",
    tag: DELIVERIES,
    data: forwardingViewSchema,
  },
  {
    method: 'put',
    path: '/sandbox/v1/forwarding',
    id: 'setForwarding',
    summary:
      'Send every callback attempt of the account (with `events`, of those event types only) to `url` instead of its configured URL',
    tag: DELIVERIES,
    body: forwardingSchema,
    data: forwardingViewSchema,
  },
  {
    method: 'delete',
    path: '/sandbox/v1/forwarding',
    id: 'deleteForwarding',
    summary: 'Stop forwarding: callbacks go to their configured URLs again',
    tag: DELIVERIES,
    data: forwardingViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/faults',
    id: 'getFaults',
    summary: "The account's delivery faults",
    tag: DELIVERIES,
    data: faultsSchema,
  },
  {
    method: 'put',
    path: '/sandbox/v1/faults',
    id: 'setFaults',
    summary:
      'Delivery faults: `duplicate` (each 2xx attempt sent once more), `delayMs` (each attempt waits first), `shuffle` (payments and clients not held to raise order); a field left out is off',
    tag: DELIVERIES,
    body: faultsSchema,
    data: faultsSchema,
  },
];

/** The server-sent events of the account, last in the document. */
export const STREAM_OPERATION: Operation = {
  method: 'get',
  path: '/sandbox/v1/stream',
  id: 'stream',
  summary:
    'Server-sent events: `event`, `transfer` and `delivery` messages of the account, live (and `forwarding` and `apiFaults` when those change)',
  tag: DELIVERIES,
  produces: 'text/event-stream',
};
