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

/** The master key that wrapped `sealed`; a key file is re-read once for an unknown id (a rotation elsewhere). */
function keyFor(sealed: SealedSecret): Buffer {
  let key = keyring.byId.get(sealed.kid);
  if (key === undefined && keyring.source !== 'GATEWAY_MASTER_KEY') {
    keyring = loadKeyring(undefined, dataDir);
    key = keyring.byId.get(sealed.kid);
  }
  if (key === undefined) throw new TamperedError(`No master key with id ${sealed.kid} is loaded: the vault was sealed under another master key.`);
  return key;
}

function handle(request: VaultRequest): VaultReply {
  switch (request.op) {
    case 'seal':
      return { id: request.id, sealed: seal(keyring.active, request.recordId, request.plaintext) };
    case 'unseal':
      return { id: request.id, plaintext: unseal(keyFor(request.sealed), request.recordId, request.sealed) };
    case 'rewrap': {
      const activeKid = [...keyring.byId.keys()][0];
      if (request.sealed.kid === activeKid) return { id: request.id, sealed: request.sealed };
      return { id: request.id, sealed: rewrap(keyFor(request.sealed), keyring.active, request.recordId, request.sealed) };
    }
    case 'add-key':
    case 'drop-old-keys': {
      if (keyring.source === 'GATEWAY_MASTER_KEY') {
        throw new RotationError('The master keys come from GATEWAY_MASTER_KEY: put the new key first ("new,old") and restart instead.');
      }
      const keys = request.op === 'add-key' ? [randomBytes(32), ...keyring.byId.values()] : [keyring.active];
      writeKeyFile(dataDir, keys);
      keyring = loadKeyring(undefined, dataDir);
      return { id: request.id, activeKid: keyId(keyring.active) };
    }
  }
}

class RotationError extends Error {}

port.on('message', (request: VaultRequest) => {
  try {
    port.postMessage(handle(request));
  } catch (error) {
    const tampered = error instanceof TamperedError;
    // Only messages written here are passed on: nothing else can carry key material out.
    const message = tampered || error instanceof RotationError ? (error as Error).message : 'The vault worker failed.';
    port.postMessage({ id: request.id, error: { tampered, message } });
  }
});
