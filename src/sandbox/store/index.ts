/** The SQLite store: the database, its migrations, records, the account groups and `check`. */
export { memoryStore } from './database.js';
