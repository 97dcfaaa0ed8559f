import { config } from 'zod';

// First of the page's modules: its policy forbids eval (script-src 'self'), so zod must never probe for it, not
// even while the schemas are being defined (a refused probe is reported as a policy violation).
config({ jitless: true });
