import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

/** The package version, read once from package.json beside dist/. */
export const version: string = manifest.version;

/** The ranges of the package's peer dependencies (the dashboard's ink and react among them), by name. */
export const peerRanges: Record<string, string> = manifest.peerDependencies;
