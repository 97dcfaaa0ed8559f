// Writes scenario.schema.json (the scenario format as a JSON Schema, shipped in the package and named by every
// fixture's `$schema`) from the built core: `npm run build && node scripts/scenario-schema.js`. A test fails when the
// committed file and the format disagree.
import { writeFileSync } from 'node:fs';
import { scenarioJsonSchema } from '../dist/core/scenarios/scenario.js';

writeFileSync(
  new URL('../scenario.schema.json', import.meta.url),
  `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`,
);
