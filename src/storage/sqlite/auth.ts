import { and, eq, isNull, sql, type AnyColumn } from 'drizzle-orm';
import type { KeyRecord, UsedKeyRecord } from '../../auth/keys.ts';
import type { LeadRecord, NewLeadRecord } from '../../auth/leads.ts';
import type { SessionRecord } from '../../console/sessions.ts';
import type { AppDatabase } from './db/index.ts';
import { leadListing } from './db/lead-listing.ts';
import { apiKeys, apiKeyUsage, leads } from './db/schema/index.ts';
import { writePause } from './write-pause.ts';
import type { AuthRecords, KeyRecords, KeyUsageRecords, LeadRecords, SessionRecords } from '../auth.ts';

/** How SQLite finds a part of an address: as given, with no pattern characters (LIKE would take % and _ as such). */
const byEmailPart = (email: AnyColumn, part: string) => sql`instr(${email}, ${part}) > 0`;

/** The auth capabilities' records in svc's SQLite file. */
export function sqliteAuthRecords(database: AppDatabase): AuthRecords {
  return { keys: sqliteKeyRecords(database), keyUsage: sqliteKeyUsageRecords(database), leads: sqliteLeadRecords(database), sessions: sqliteSessionRecords(database) };
}

/** An api_keys row as SQLite returns it (JSON columns still text). */
interface RawKeyRow {
  id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  scopes: string;
  allowed_domains: string;
  store_id: string | null;
  created_at: number;
  revoked_at: number | null;
}

const fromRaw = (row: RawKeyRow): KeyRecord => ({
  id: row.id,
  name: row.name,
  keyHash: row.key_hash,
  keyPrefix: row.key_prefix,
  scopes: JSON.parse(row.scopes) as string[],
  allowedDomains: JSON.parse(row.allowed_domains) as string[],
  storeId: row.store_id,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
});

function sqliteKeyRecords({ db, sqlite }: AppDatabase): KeyRecords {
  // Raw prepared statements: a key is looked up by hash on every signed telemetry request the
  // verified keys in memory do not answer, where drizzle's query path measured about three times
  // slower than the lookup itself; by id on every console request.
  const byHash = sqlite.query<RawKeyRow, [string]>('SELECT * FROM api_keys WHERE key_hash = ?');
  const byId = sqlite.query<RawKeyRow, [string]>('SELECT * FROM api_keys WHERE id = ?');
  const revoke = sqlite.query<unknown, [number, string]>('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const withLastUse = () => db.select({ key: apiKeys, lastUsedAt: apiKeyUsage.lastUsedAt }).from(apiKeys).leftJoin(apiKeyUsage, eq(apiKeyUsage.keyId, apiKeys.id));
  const used = ({ key, lastUsedAt }: { key: KeyRecord; lastUsedAt: number | null }): UsedKeyRecord => ({ ...key, lastUsedAt });
  return {
    async add(key) {
      db.insert(apiKeys).values(key).run();
    },
    async byHash(keyHash) {
      const row = byHash.get(keyHash);
      return row ? fromRaw(row) : null;
    },
    async byId(id) {
      const row = byId.get(id);
      return row ? fromRaw(row) : null;
    },
    async revoke(id, at) {
      revoke.run(at, id);
      const row = withLastUse().where(eq(apiKeys.id, id)).get();
      return row ? used(row) : null;
    },
    async list() {
      return withLastUse().orderBy(apiKeys.createdAt, apiKeys.id).all().map(used);
    },
  };
}

/** Turns a write waits for a transaction of the same connection to end before it gives up. */
const TRANSACTION_WAITS = 10;

function sqliteKeyUsageRecords({ sqlite }: AppDatabase): KeyUsageRecords {
  const record = sqlite.prepare<unknown, [string, number]>(
    'INSERT INTO api_key_usage (key_id, last_used_at) VALUES (?, ?) ON CONFLICT (key_id) DO UPDATE SET last_used_at = max(last_used_at, excluded.last_used_at)',
  );
  const pause = writePause(sqlite);
  return {
    // Written once the checkpointer's write pause is over, and never inside another transaction of
    // this connection, whose rollback would undo it unnoticed: after it, on a later turn (SQLite
    // transactions are synchronous callbacks, so one is over by then).
    noteUse(keyId, at) {
      return new Promise<void>((resolve, reject) => {
        let waits = 0;
        const write = () => {
          if (sqlite.inTransaction) {
            if (++waits > TRANSACTION_WAITS) return reject(new Error('a transaction stayed open; the last use is not written'));
            return void setImmediate(() => pause.afterPause(write));
          }
          try {
            record.run(keyId, at);
            resolve();
          } catch (error) {
            reject(error);
          }
        };
        pause.afterPause(write);
      });
    },
  };
}

function sqliteLeadRecords({ db }: AppDatabase): LeadRecords {
  const byTokenHash = db.select().from(leads).where(eq(leads.tokenHash, sql.placeholder('hash'))).prepare();
  const byId = db.select().from(leads).where(eq(leads.id, sql.placeholder('id'))).prepare();
  const markFirstScan = db
    .update(leads)
    .set({ firstScanAt: sql`${sql.placeholder('at')}` })
    .where(and(eq(leads.id, sql.placeholder('id')), isNull(leads.firstScanAt)))
    .prepare();
  /** The lead stored, or null when a unique key (the email's first lead) refused it. `asRepeat`: it names the email's first lead, found in the same statement. */
  const insert = (lead: NewLeadRecord, asRepeat: boolean): LeadRecord | null =>
    db
      .insert(leads)
      .values({
        ...lead,
        repeatOf: asRepeat ? sql`(SELECT ${leads.id} FROM ${leads} WHERE ${leads.email} = ${lead.email} AND ${leads.repeatOf} IS NULL)` : null,
      })
      .onConflictDoNothing()
      .returning()
      .get() ?? null;
  return {
    async addFirst(lead) {
      return insert(lead, false);
    },
    async addSignUp(lead) {
      // One statement, and SQLite has one writer: no other sign-up can come between the lookup of the first lead and the insert.
      const row = insert(lead, true);
      if (!row) throw new Error('a sign-up inserted no lead');
      return row;
    },
    async get(id) {
      return byId.get({ id }) ?? null;
    },
    async byTokenHash(hash) {
      return byTokenHash.get({ hash }) ?? null;
    },
    async replaceToken(id, tokenHash, at) {
      const row = db.update(leads).set({ tokenHash, tokenIssuedAt: at, tokenRevokedAt: null }).where(eq(leads.id, id)).returning({ id: leads.id }).get();
      return row !== undefined;
    },
    async verify(id, at) {
      return db.update(leads).set({ verified: true, verifiedAt: sql`coalesce(${leads.verifiedAt}, ${at})` }).where(eq(leads.id, id)).returning().get() ?? null;
    },
    async revokeToken(id, at) {
      return db.update(leads).set({ tokenHash: null, tokenRevokedAt: at }).where(eq(leads.id, id)).returning().get() ?? null;
    },
    async list(query, after, limit) {
      const { where, order } = leadListing(leads, byEmailPart, query, after);
      return db.select().from(leads).where(where).orderBy(...order).limit(limit).all();
    },
    async noteFirstScan(id, at) {
      markFirstScan.run({ id, at });
    },
  };
}

interface SessionRow {
  id_hash: string;
  key_id: string;
  created_at: number;
  last_seen_at: number;
}

function sqliteSessionRecords({ sqlite }: AppDatabase): SessionRecords {
  const insert = sqlite.prepare<unknown, [string, string, number, number]>('INSERT INTO console_sessions (id_hash, key_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)');
  const byHash = sqlite.prepare<SessionRow, [string]>('SELECT id_hash, key_id, created_at, last_seen_at FROM console_sessions WHERE id_hash = ?');
  const touch = sqlite.prepare<unknown, [number, string]>('UPDATE console_sessions SET last_seen_at = ? WHERE id_hash = ?');
  const remove = sqlite.prepare<unknown, [string]>('DELETE FROM console_sessions WHERE id_hash = ?');
  const sweep = sqlite.prepare<unknown, [number]>(
    'DELETE FROM console_sessions WHERE last_seen_at < ? OR key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NOT NULL)',
  );
  return {
    async add(session: SessionRecord) {
      insert.run(session.idHash, session.keyId, session.createdAt, session.lastSeenAt);
    },
    async byHash(idHash) {
      const row = byHash.get(idHash);
      return row ? { idHash: row.id_hash, keyId: row.key_id, createdAt: row.created_at, lastSeenAt: row.last_seen_at } : null;
    },
    async touch(idHash, at) {
      touch.run(at, idHash);
    },
    async remove(idHash) {
      remove.run(idHash);
    },
    async sweep(idleBefore) {
      sweep.run(idleBefore);
    },
  };
}
