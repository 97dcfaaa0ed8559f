/** The contract's initialisms, as a label writes them. */
const INITIALISMS: Record<string, string> = { id: 'ID', cvu: 'CVU', url: 'URL', ttl: 'TTL' };

/** A field's label from its name: `externalReference` → `External reference`, `callbackUrl` → `Callback URL`. */
export function labelOf(name: string): string {
  const text = name
    .replace(/([A-Z])/g, ' $1')
    .toLowerCase()
    .split(' ')
    .map((word) => INITIALISMS[word] ?? word)
    .join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}
