import { and, eq, inArray, isNotNull, isNull, lt, or, sql, type AnyColumn } from 'drizzle-orm';
import type { UsedKeyRecord } from '../../auth/keys.ts';
import type { LeadRecord, NewLeadRecord } from '../../auth/leads.ts';
import { leadListing } from '../sqlite/db/lead-listing.ts';
import { apiKeys, apiKeyUsage, consoleSessions, leads } from './db/schema/index.ts';
import type { AuthRecords, KeyRecords, KeyUsageRecords, LeadRecords, SessionRecords } from '../auth.ts';
import type { PostgresClient } from './client.ts';

/** How PostgreSQL finds a part of an address: as given, with no pattern characters (LIKE would take % and _ as such). */
const byEmailPart = (email: AnyColumn, part: string) => sql`strpos(${email}, ${part}) > 0`;

/** The auth capabilities' records in a PostgreSQL database (drizzle over Bun's client; epoch-ms columns read as numbers). */
export function postgresAuthRecords(client: PostgresClient): AuthRecords {
  return { keys: postgresKeyRecords(client), keyUsage: postgresKeyUsageRecords(client), leads: postgresLeadRecords(client), sessions: postgresSessionRecords(client) };
}

const first = <Row>(rows: Row[]): Row | null => rows[0] ?? null;

function postgresKeyRecords({ db }: PostgresClient): KeyRecords {
  const withLastUse = () => db.select({ key: apiKeys, lastUsedAt: apiKeyUsage.lastUsedAt }).from(apiKeys).leftJoin(apiKeyUsage, eq(apiKeyUsage.keyId, apiKeys.id));
  const used = ({ key, lastUsedAt }: { key: typeof apiKeys.$inferSelect; lastUsedAt: number | null }): UsedKeyRecord => ({ ...key, lastUsedAt });
  return {
    async add(key) {
      await db.insert(apiKeys).values(key);
    },
    async byHash(keyHash) {
      return first(await db.select().from(apiKeys).where(eq(apiKeys.keyHash, keyHash)));
    },
    async byId(id) {
      return first(await db.select().from(apiKeys).where(eq(apiKeys.id, id)));
    },
    async revoke(id, at) {
      await db.update(apiKeys).set({ revokedAt: at }).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)));
      const row = first(await withLastUse().where(eq(apiKeys.id, id)));
      return row && used(row);
    },
    async list() {
      return (await withLastUse().orderBy(apiKeys.createdAt, apiKeys.id)).map(used);
    },
  };
}

function postgresKeyUsageRecords({ db }: PostgresClient): KeyUsageRecords {
  return {
    async noteUse(keyId, at) {
      await db
        .insert(apiKeyUsage)
        .values({ keyId, lastUsedAt: at })
        .onConflictDoUpdate({ target: apiKeyUsage.keyId, set: { lastUsedAt: sql`greatest(${apiKeyUsage.lastUsedAt}, excluded.last_used_at)` } });
    },
  };
}

/** Sign-ups of one email racing: the one that lost the first-lead insert tries again once as a repeat (it then finds the winner). */
const SIGN_UP_ATTEMPTS = 2;

function postgresLeadRecords({ db }: PostgresClient): LeadRecords {
  /** The lead stored, or null when a unique key (the email's first lead) refused it. `asRepeat`: it names the email's first lead, found in the same statement. */
  const insert = async (lead: NewLeadRecord, asRepeat: boolean): Promise<LeadRecord | null> =>
    first(
      await db
        .insert(leads)
        .values({
          ...lead,
          repeatOf: asRepeat ? sql`(SELECT ${leads.id} FROM ${leads} WHERE ${leads.email} = ${lead.email} AND ${leads.repeatOf} IS NULL)` : null,
        })
        .onConflictDoNothing()
        .returning(),
    );
  return {
    addFirst: (lead) => insert(lead, false),
    async addSignUp(lead) {
      // Read committed: two first sign-ups of one email both find no first lead; the unique index
      // lets one in, and the other, tried again, now finds it and becomes its repeat.
      for (let attempt = 0; attempt < SIGN_UP_ATTEMPTS; attempt++) {
        const row = await insert(lead, true);
        if (row) return row;
      }
      throw new Error('a sign-up inserted no lead');
    },
    async get(id) {
      return first(await db.select().from(leads).where(eq(leads.id, id)));
    },
    async byTokenHash(tokenHash) {
      return first(await db.select().from(leads).where(eq(leads.tokenHash, tokenHash)));
    },
    async replaceToken(id, tokenHash, at) {
      const rows = await db.update(leads).set({ tokenHash, tokenIssuedAt: at, tokenRevokedAt: null }).where(eq(leads.id, id)).returning({ id: leads.id });
      return rows.length > 0;
    },
    async verify(id, at) {
      return first(await db.update(leads).set({ verified: true, verifiedAt: sql`coalesce(${leads.verifiedAt}, ${at})` }).where(eq(leads.id, id)).returning());
    },
    async revokeToken(id, at) {
      return first(await db.update(leads).set({ tokenHash: null, tokenRevokedAt: at }).where(eq(leads.id, id)).returning());
    },
    async list(query, after, limit) {
      const { where, order } = leadListing(leads, byEmailPart, query, after);
      return db.select().from(leads).where(where).orderBy(...order).limit(limit);
    },
    async noteFirstScan(id, at) {
      await db.update(leads).set({ firstScanAt: at }).where(and(eq(leads.id, id), isNull(leads.firstScanAt)));
    },
  };
}

function postgresSessionRecords({ db }: PostgresClient): SessionRecords {
  const revokedKeys = () => db.select({ id: apiKeys.id }).from(apiKeys).where(isNotNull(apiKeys.revokedAt));
  return {
    async add(session) {
      await db.insert(consoleSessions).values(session);
    },
    async byHash(idHash) {
      return first(await db.select().from(consoleSessions).where(eq(consoleSessions.idHash, idHash)));
    },
    async touch(idHash, at) {
      await db.update(consoleSessions).set({ lastSeenAt: at }).where(eq(consoleSessions.idHash, idHash));
    },
    async remove(idHash) {
      await db.delete(consoleSessions).where(eq(consoleSessions.idHash, idHash));
    },
    async sweep(idleBefore) {
      await db.delete(consoleSessions).where(or(lt(consoleSessions.lastSeenAt, idleBefore), inArray(consoleSessions.keyId, revokedKeys())));
    },
  };
}
