import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { SealedSecret } from './crypto.js';
import type { VaultReady, VaultReply, VaultRequest } from './vault-protocol.js';

type Pending = { resolve: (reply: VaultReply) => void; reject: (error: Error) => void };
type Operation = VaultRequest extends infer Request ? (Request extends VaultRequest ? Omit<Request, 'id'> : never) : never;

/** A sealed secret that failed its integrity check; never half-used. */
export class VaultTamperedError extends Error {
  override readonly name = 'VaultTamperedError';
}

/** The shared current master key is not loaded by this instance: it refuses to seal rather than seal under a retired key. */
export class VaultKeyMissingError extends Error {
  override readonly name = 'VaultKeyMissingError';
}

/**
 * The request thread's handle on the vault worker. It never sees the master key: on start the key
 * (from the environment given) is handed to the worker's own environment and deleted here.
 */
export class Vault {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private exited = false;

  private constructor(
    private readonly worker: Worker,
    /** Id of the active master key (a fingerprint). */
    public activeKeyId: string,
    /** Where the worker read the master keys: `GATEWAY_MASTER_KEY` or the data dir's key file. */
    readonly source: 'env' | 'file',
  ) {
    worker.on('message', (reply: VaultReply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      waiting.resolve(reply);
    });
    worker.on('error', (error) => this.failAll(error));
    worker.on('exit', () => {
      this.exited = true;
      this.failAll(new Error('The vault worker stopped.'));
    });
    worker.unref();
  }

  static async start(options: { dataDir: string; environment: NodeJS.ProcessEnv }): Promise<Vault> {
    const { environment } = options;
    const inherit = environment === process.env;
    const worker = new Worker(new URL('./vault-worker.js', import.meta.url), {
      workerData: { dataDir: options.dataDir },
      // Without an `env` option Node copies process.env to the worker natively; passing process.env
      // explicitly would copy it through JavaScript and leave the key's string in this thread's heap
      // (measured with a heap snapshot). Another environment object can only pass the key itself.
      ...(inherit ? {} : { env: environment.GATEWAY_MASTER_KEY ? { GATEWAY_MASTER_KEY: environment.GATEWAY_MASTER_KEY } : {} }),
    });
    delete environment.GATEWAY_MASTER_KEY;
    const [ready] = (await once(worker, 'message')) as [VaultReady];
    if (!ready.ready) {
      await worker.terminate();
      throw new Error(ready.message);
    }
    return new Vault(worker, ready.activeKid, ready.source);
  }

  /** Seals under the master key `kid` (the shared current one), else under the worker's active key. */
  async seal(recordId: string, plaintext: string, kid?: string): Promise<SealedSecret> {
    const reply = await this.call({ op: 'seal', recordId, plaintext, ...(kid === undefined ? {} : { kid }) });
    if (!('sealed' in reply)) throw new Error('unexpected vault reply');
    return reply.sealed;
  }

  async unseal(recordId: string, sealed: SealedSecret): Promise<string> {
    const reply = await this.call({ op: 'unseal', recordId, sealed });
    if (!('plaintext' in reply)) throw new Error('unexpected vault reply');
    return reply.plaintext;
  }

  /** The same secret with its data key wrapped under the master key `kid`, else the active one. */
  async rewrap(recordId: string, sealed: SealedSecret, kid?: string): Promise<SealedSecret> {
    const reply = await this.call({ op: 'rewrap', recordId, sealed, ...(kid === undefined ? {} : { kid }) });
    if (!('sealed' in reply)) throw new Error('unexpected vault reply');
    return reply.sealed;
  }

  /** Key-file rotation, step 1: a new active key; the old ones still unseal. Returns the new key id. */
  async addKey(): Promise<string> {
    const reply = await this.call({ op: 'add-key' });
    if (!('activeKid' in reply)) throw new Error('unexpected vault reply');
    this.activeKeyId = reply.activeKid;
    return reply.activeKid;
  }

  /** Key-file rotation, last step: the file keeps the active key and the keys in `keep` (still used by some record). */
  async retireKeys(keep: readonly string[]): Promise<void> {
    await this.call({ op: 'retire-keys', keep });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }

  private call(operation: Operation): Promise<VaultReply> {
    // A stopped worker answers nothing: refuse at once rather than wait forever.
    if (this.exited) return Promise.reject(new Error('The vault worker stopped.'));
    const id = this.nextId++;
    return new Promise<VaultReply>((resolve, reject) => {
      // Referenced only while a reply is awaited, so an idle vault never keeps the process alive.
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...operation, id });
    }).then((reply) => {
      if ('error' in reply) throw vaultError(reply.error);
      return reply;
    });
  }

  private failAll(error: Error): void {
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}

function vaultError(error: { tampered: boolean; missingKey?: boolean; message: string }): Error {
  if (error.tampered) return new VaultTamperedError(error.message);
  return error.missingKey ? new VaultKeyMissingError(error.message) : new Error(error.message);
}
