/** The operations of the API fault rules and of the request journal. */
import {
  apiFaultRuleSchema,
  apiFaultRuleViewSchema,
  apiFaultsClearedSchema,
} from '../../core/api-faults/api-faults.js';
import { listQuery } from '../../core/records/index.js';
import { journalItemSchema, listRequestsQuery, requestsClearedSchema } from '../../core/records/request-journal.js';
import { apiFaultKinds } from '../../core/records/words.js';
import { type Operation, SANDBOX } from './openapi-operation.js';

/** The rules that make the account's `/api/v1` requests fail (contract part 7). */
export const API_FAULT_OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/sandbox/v1/api-faults',
    id: 'addApiFault',
    summary: `Add an API fault rule: the account's matching \`/api/v1\` requests get ${apiFaultKinds('named')}, the next \`times\` or with a seeded \`probability\`; the first rule that matches applies`,
    tag: SANDBOX,
    body: apiFaultRuleSchema,
    status: 201,
    errors: [409],
    data: apiFaultRuleViewSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/api-faults',
    id: 'listApiFaults',
    summary: "The account's API fault rules, in the order they apply (the order added), with their hits",
    tag: SANDBOX,
    query: listQuery,
    list: true,
    data: apiFaultRuleViewSchema,
  },
  {
    method: 'delete',
    path: '/sandbox/v1/api-faults',
    id: 'clearApiFaults',
    summary: 'Remove every API fault rule of the account',
    tag: SANDBOX,
    data: apiFaultsClearedSchema,
  },
  {
    method: 'delete',
    path: '/sandbox/v1/api-faults/{id}',
    id: 'deleteApiFault',
    summary: 'Remove one API fault rule (the answer is the rule as it was)',
    tag: SANDBOX,
    data: apiFaultRuleViewSchema,
  },
];

/** The request journal: the account's `/api/v1` requests as sent and answered. */
export const JOURNAL_OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/sandbox/v1/requests',
    id: 'listRequests',
    summary:
      "The request journal: the account's `/api/v1` requests as sent and answered, newest first (`path`: `{id}` or `*` stands for one segment)",
    tag: SANDBOX,
    query: listRequestsQuery,
    list: true,
    data: journalItemSchema,
  },
  {
    method: 'get',
    path: '/sandbox/v1/requests/{id}',
    id: 'getRequest',
    summary: 'One request of the journal',
    tag: SANDBOX,
    data: journalItemSchema,
  },
  {
    method: 'delete',
    path: '/sandbox/v1/requests',
    id: 'clearRequests',
    summary: "Remove every request of the account's journal",
    tag: SANDBOX,
    data: requestsClearedSchema,
  },
];
