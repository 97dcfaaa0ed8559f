/** Callback delivery: attempts on the account's clock, their pace and flights, and the receiver. */
export type { AttemptResult, Transport } from './delivery.js';
export type { ReceivedCallback } from './receiver.js';
