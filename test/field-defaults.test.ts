import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { accountExportSchema, exportedAccount } from '../src/core/account-export/index.js';
import { RECORD_OF, TABLES, type TableName } from '../src/core/records/state.js';
import { readPreviousRelease } from '../src/sandbox/previous-release/previous-release.js';

/**
 * The rule for a new record field (docs/architecture.md, "How to add a field"): it is declared with a default
 * (`.default(null)`), so the exports and data sets made before it still import and load. Held against files frozen
 * from earlier releases: their version-2 exports (test/data/v2) and the previous release's data set.
 */
const V2 = resolve(import.meta.dirname, 'data', 'v2');
const EXPORTS = readdirSync(V2).filter((name) => name.startsWith('export-'));
const PREVIOUS = resolve(import.meta.dirname, 'data', 'previous-release', 'current-clean', 'state.json');

type Export = { account: Record<TableName, Record<string, object>> };
const exportOf = (name: string) => JSON.parse(readFileSync(resolve(V2, name), 'utf8')) as Export;

/** The fields of a record schema a frozen file's records of that kind do not all hold. */
function fieldsMissing(schema: z.ZodObject, records: object[]): string[] {
  return Object.keys(schema.shape).filter((name) => records.some((record) => !(name in record)));
}

/** Whether a field may be absent from a file: it has a default, or is optional. */
const absentOk = (field: z.ZodType) => field.safeParse(undefined).success;

describe('a record field declared after a frozen file was made has a default', () => {
  it.each(EXPORTS)('%s: every field its records lack has a default, and it imports', (name) => {
    const file = exportOf(name);
    expect(accountExportSchema.safeParse(file).error).toBeUndefined();
    for (const table of TABLES) {
      const schema: z.ZodType = exportedAccount.shape[table].valueType;
      if (!(schema instanceof z.ZodObject)) continue;
      const records = Object.values(file.account[table] ?? {});
      const without = fieldsMissing(schema, records).filter((field) => !absentOk(schema.shape[field] as z.ZodType));
      expect(without, `${table}: fields without a default, absent from ${name}`).toEqual([]);
    }
  });

  it('the previous release data set loads with every record whole by its schema (the defaults filled in)', () => {
    const accounts = Object.values(readPreviousRelease(PREVIOUS)?.accounts ?? {});
    expect(accounts.length).toBeGreaterThan(0);
    for (const account of accounts) {
      for (const table of TABLES) {
        for (const record of Object.values(account[table])) {
          const parsed = RECORD_OF[table].safeParse(record);
          expect(parsed.error?.issues, `${table} ${JSON.stringify(record).slice(0, 80)}`).toBeUndefined();
        }
      }
    }
  });
});
