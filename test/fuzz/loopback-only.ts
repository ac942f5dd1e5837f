import dns, { type LookupAddress } from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

/**
 * Keeps a fuzzing process on loopback whatever the generated requests ask for: name lookups
 * answer only `localhost` (as 127.0.0.1 / ::1) and refuse every other name without asking a
 * resolver, and a socket connect to anything but a loopback address is failed before it is
 * opened. Both are recorded, so a test can prove nothing tried to leave the machine.
 */
export interface LoopbackGuard {
  /** Names something tried to resolve (other than localhost): all refused. */
  readonly refusedLookups: string[];
  /** Hosts something tried to connect to that are not loopback: all refused. */
  readonly refusedConnects: string[];
}

const isLoopback = (host: string): boolean => {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (bare === 'localhost' || bare === '::1' || bare === '::ffff:127.0.0.1') return true;
  return net.isIPv4(bare) && bare.startsWith('127.');
};

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

let installed: LoopbackGuard | undefined;

/** Installs the guard in this process (once; later calls return the same record). */
export function installLoopbackGuard(): LoopbackGuard {
  if (installed) return installed;
  const guard: LoopbackGuard = { refusedLookups: [], refusedConnects: [] };

  const lookup = (hostname: string, options: unknown, callback?: LookupCallback): void => {
    const done = (typeof options === 'function' ? options : callback) as LookupCallback;
    const settings = (typeof options === 'object' && options !== null ? options : {}) as { all?: boolean; family?: number | string };
    const family = settings.family === 6 || settings.family === 'IPv6' ? 6 : 4;
    if (!isLoopback(hostname)) {
      guard.refusedLookups.push(hostname);
      const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (the fuzz suite resolves only localhost)`), {
        code: 'ENOTFOUND',
        hostname,
      });
      process.nextTick(() => done(error, settings.all ? [] : '', family));
      return;
    }
    const address = net.isIP(hostname) ? hostname : family === 6 ? '::1' : '127.0.0.1';
    const addressFamily = net.isIP(address) || 4;
    process.nextTick(() => (settings.all ? done(null, [{ address, family: addressFamily }]) : done(null, address, addressFamily)));
  };
  (dns as { lookup: unknown }).lookup = lookup;
  // `import { lookup } from 'node:dns'` bindings (the custom-host guard's) follow the patched function.
  syncBuiltinESMExports();

  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    // net.connect() hands over its normalised arguments as an array: [options, callback].
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    let host: string | undefined;
    let path: string | undefined;
    if (typeof first === 'object' && first !== null) {
      host = (first as net.TcpNetConnectOpts).host;
      path = (first as net.IpcNetConnectOpts).path;
    } else if (typeof first === 'string' && !/^\d+$/.test(first)) {
      path = first;
    } else if (typeof args[1] === 'string') {
      host = args[1];
    }
    if (path === undefined && host !== undefined && !isLoopback(host)) {
      guard.refusedConnects.push(host);
      process.nextTick(() => this.destroy(Object.assign(new Error(`connect to ${host} refused by the fuzz suite (loopback only)`), { code: 'ECONNREFUSED' })));
      return this;
    }
    return (connect as (...rest: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect;

  installed = guard;
  return guard;
}
