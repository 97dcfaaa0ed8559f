/**
 * Account export and import: the export format, its records and the checks made before an import.
 */
export * from './account-export.js';
export * from './export-checks.js';
export * from './export-records.js';
