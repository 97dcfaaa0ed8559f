// Node 22 prints "ExperimentalWarning: SQLite is an experimental feature and might change at any time" the first time
// node:sqlite is loaded (the state database); Node 24 and later print nothing. The CLI drops exactly that warning and
// leaves every other one (another ExperimentalWarning included) to Node, which prints it as usual. Imported first by
// va-sandbox.js, so it is in place before anything loads node:sqlite.
const emitWarning = process.emitWarning;

process.emitWarning = function (warning, ...rest) {
  // process.emitWarning(warning[, type[, code]][, ctor]) or (warning[, options]); an Error's name is its type.
  const type = warning instanceof Error ? warning.name : typeof rest[0] === 'string' ? rest[0] : rest[0]?.type;
  const message = warning instanceof Error ? warning.message : String(warning);
  if (type === 'ExperimentalWarning' && /\bSQLite\b/.test(message)) return;
  return emitWarning.call(this, warning, ...rest);
};
