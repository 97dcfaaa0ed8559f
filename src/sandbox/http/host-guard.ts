import type { Context } from 'hono';
import { SandboxError } from '../../core/index.js';
import { type Env, header } from './routes/kit.js';

/** `localhost`, 127.0.0.0/8 and `[::1]`: names a web page cannot make its own by rebinding DNS. */
const LOOPBACK = /^(localhost|127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}|\[::1\])$/;

/** The host name of a Host header, lower case, without its port or a trailing dot; IPv6 keeps its brackets. */
const hostName = (host: string): string => {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  return name.toLowerCase().replace(/\.$/, '');
};

/**
 * The DNS-rebinding guard: a web page whose name was rebound to 127.0.0.1 reaches the sandbox with its own name in
 * `Host`, so only loopback names and the given ones are served, on every route (`/health` too); the rest is 403.
 */
export function hostGuard(allowedHosts: string[]) {
  const allowed = new Set(
    allowedHosts.map((host) => hostName(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host)),
  );
  return async (c: Context<Env>, next: () => Promise<void>) => {
    const host = header(c, 'host') ?? '';
    const name = hostName(host);
    if (!LOOPBACK.test(name) && !allowed.has(name)) {
      throw new SandboxError(
        'HOST_NOT_ALLOWED',
        `Host ${host || '(none)'} is not allowed: use a loopback address or start with --allowed-host`,
        [`Host: ${name || '(none)'} is not a loopback name or address, the --host value or an --allowed-host`],
      );
    }
    await next();
  };
}
