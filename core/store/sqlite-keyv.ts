import { EventEmitter } from 'node:events';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { KeyvStoreAdapter, StoredData } from 'keyv';

/**
 * A keyv store adapter over the built-in `node:sqlite` (no native build, nothing to install).
 * Values are the strings keyv serialises; expiry is kept beside them and honoured on read.
 */
export class SqliteKeyvStore extends EventEmitter implements KeyvStoreAdapter {
  readonly opts: { dialect: 'sqlite' } = { dialect: 'sqlite' };
  namespace?: string;
  private readonly statements: { get: StatementSync; set: StatementSync; delete: StatementSync; clear: StatementSync };

  constructor(database: DatabaseSync) {
    super();
    database.exec('CREATE TABLE IF NOT EXISTS keyv (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires INTEGER)');
    this.statements = {
      get: database.prepare('SELECT value, expires FROM keyv WHERE key = ?'),
      set: database.prepare('INSERT INTO keyv (key, value, expires) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires = excluded.expires'),
      delete: database.prepare('DELETE FROM keyv WHERE key = ?'),
      clear: database.prepare('DELETE FROM keyv'),
    };
  }

  async get<Value>(key: string): Promise<StoredData<Value> | undefined> {
    const row = this.statements.get.get(key) as { value: string; expires: number | null } | undefined;
    if (row === undefined) return undefined;
    if (row.expires !== null && row.expires <= Date.now()) {
      this.statements.delete.run(key);
      return undefined;
    }
    return row.value as StoredData<Value>;
  }

  async set(key: string, value: unknown, ttl?: number): Promise<boolean> {
    this.statements.set.run(key, String(value), typeof ttl === 'number' && ttl > 0 ? Date.now() + ttl : null);
    return true;
  }

  async delete(key: string): Promise<boolean> {
    return Number(this.statements.delete.run(key).changes) > 0;
  }

  async clear(): Promise<void> {
    this.statements.clear.run();
  }
}
