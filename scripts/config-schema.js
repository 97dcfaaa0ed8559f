// Writes config.schema.json (the JSON Schema of a `va-sandbox start --config` file, shipped in the package and named by
// docs/va-sandbox.example.json's `$schema`) from the built start options: `npm run build && node scripts/config-schema.js`.
// A test fails when the committed file and the options disagree.
import { writeFileSync } from 'node:fs';
import { configJsonSchema } from '../dist/cli/start-options.js';

writeFileSync(new URL('../config.schema.json', import.meta.url), `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
