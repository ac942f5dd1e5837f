import { parentPort, workerData } from 'node:worker_threads';
import { randomBytes } from 'node:crypto';
import { keyId, rewrap, seal, type SealedSecret, TamperedError, unseal } from './crypto.js';
import { type Keyring, loadKeyring, writeKeyFile } from './keyring.js';
import type { VaultReply, VaultRequest } from './vault-protocol.js';

/**
 * The vault worker: the only place the master key exists. The request thread sends sealed secrets
 * (wrapped data key + ciphertext) and receives plaintext; the keyring never leaves this thread.
 */
const { dataDir } = workerData as { dataDir: string };
const port = parentPort!;

let keyring: Keyring;
try {
  keyring = loadKeyring(process.env.GATEWAY_MASTER_KEY, dataDir);
  delete process.env.GATEWAY_MASTER_KEY;
} catch (error) {
  port.postMessage({ ready: false, message: `cannot load the master key: ${(error as Error).message}` });
  process.exit(1);
}
port.postMessage({ ready: true, activeKid: [...keyring.byId.keys()][0], source: keyring.source === 'GATEWAY_MASTER_KEY' ? 'env' : 'file' });

/**
 * The loaded key with id `kid`. A key file is re-read once for an unknown id (a rotation by the CLI
 * or another instance); keys read before stay loaded, so what this instance sealed stays readable.
 */
function keyById(kid: string): Buffer | undefined {
  let key = keyring.byId.get(kid);
  if (key === undefined && keyring.source !== 'GATEWAY_MASTER_KEY') {
    const reloaded = loadKeyring(undefined, dataDir);
    keyring = { ...reloaded, byId: new Map([...keyring.byId, ...reloaded.byId]) };
    key = keyring.byId.get(kid);
  }
  return key;
}

/** The master key that wrapped `sealed`. */
function keyFor(sealed: SealedSecret): Buffer {
  const key = keyById(sealed.kid);
  if (key === undefined) throw new TamperedError(`No master key with id ${sealed.kid} is loaded: the vault was sealed under another master key.`);
  return key;
}

/** The key to seal with: `kid` (the shared current key) when given, else the active one. */
function sealingKey(kid: string | undefined): Buffer {
  if (kid === undefined) return keyring.active;
  const key = keyById(kid);
  if (key === undefined) {
    throw new MissingKeyError(
      `The current master key (id ${kid}) is not loaded by this instance: give it the same GATEWAY_MASTER_KEY ("new,old") or master.key as the others, and restart it.`,
    );
  }
  return key;
}

/** The key file's keys: the active one first, then those whose id is in `keep`. */
function retainedKeys(keep: readonly string[]): Buffer[] {
  const fileKeys = loadKeyring(undefined, dataDir);
  return [fileKeys.active, ...[...fileKeys.byId].filter(([kid, key]) => key !== fileKeys.active && keep.includes(kid)).map(([, key]) => key)];
}

function handle(request: VaultRequest): VaultReply {
  switch (request.op) {
    case 'seal':
      return { id: request.id, sealed: seal(sealingKey(request.kid), request.recordId, request.plaintext) };
    case 'unseal':
      return { id: request.id, plaintext: unseal(keyFor(request.sealed), request.recordId, request.sealed) };
    case 'rewrap': {
      const target = sealingKey(request.kid);
      if (request.sealed.kid === keyId(target)) return { id: request.id, sealed: request.sealed };
      return { id: request.id, sealed: rewrap(keyFor(request.sealed), target, request.recordId, request.sealed) };
    }
    case 'add-key':
    case 'retire-keys': {
      if (keyring.source === 'GATEWAY_MASTER_KEY') {
        throw new RotationError('The master keys come from GATEWAY_MASTER_KEY: put the new key first ("new,old") and restart instead.');
      }
      const keys = request.op === 'add-key' ? [randomBytes(32), ...loadKeyring(undefined, dataDir).byId.values()] : retainedKeys(request.keep);
      writeKeyFile(dataDir, keys);
      const reloaded = loadKeyring(undefined, dataDir);
      keyring = { ...reloaded, byId: new Map([...keyring.byId, ...reloaded.byId]) };
      return { id: request.id, activeKid: keyId(keyring.active) };
    }
  }
}

class RotationError extends Error {}
class MissingKeyError extends Error {}

port.on('message', (request: VaultRequest) => {
  try {
    port.postMessage(handle(request));
  } catch (error) {
    const tampered = error instanceof TamperedError;
    // Only messages written here are passed on: nothing else can carry key material out.
    const missingKey = error instanceof MissingKeyError;
    const message = tampered || missingKey || error instanceof RotationError ? (error as Error).message : 'The vault worker failed.';
    port.postMessage({ id: request.id, error: { tampered, missingKey, message } });
  }
});
