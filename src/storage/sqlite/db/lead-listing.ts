import { and, desc, eq, isNotNull, isNull, lt, or, type AnyColumn, type SQL } from 'drizzle-orm';
import type { LeadQuery } from '../../../auth/leads.ts';
import type { KeysetCursor } from '../../../lib/query.ts';

/** The columns of `leads` the listing reads, in either schema (src/storage/sqlite/db/schema/auth.ts, src/storage/postgres/db/schema/auth.ts). */
interface LeadColumns {
  id: AnyColumn;
  email: AnyColumn;
  verified: AnyColumn;
  tokenHash: AnyColumn;
  createdAt: AnyColumn;
}

/**
 * The lead listing's filters and keyset, newest first, as both engines run it (LeadRecords.list).
 * `contains` is how the engine finds a part of the address, as given, with no pattern characters.
 */
export function leadListing(leads: LeadColumns, contains: (email: AnyColumn, part: string) => SQL, query: LeadQuery, after: KeysetCursor | null) {
  return {
    where: and(
      query.emailContains !== undefined ? contains(leads.email, query.emailContains) : undefined,
      query.verified === undefined ? undefined : eq(leads.verified, query.verified),
      query.tokenActive === undefined ? undefined : query.tokenActive ? isNotNull(leads.tokenHash) : isNull(leads.tokenHash),
      after ? or(lt(leads.createdAt, after.at), and(eq(leads.createdAt, after.at), lt(leads.id, after.id))) : undefined,
    ),
    order: [desc(leads.createdAt), desc(leads.id)],
  };
}
