import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** Whether this instance runs the background work that must run once (the roller, retention, reconciliation). */
export type InstanceRole = 'leader' | 'follower';

/** This svc process among the instances of one service: how its logs and health name it, and its role. */
export interface Instance {
  id: string;
  role(): InstanceRole;
}

/**
 * An id for this process: the host's name (a container's, in a container) and 6 random hex digits,
 * new at each start, so two processes on one host, or one host's successive starts, never share one.
 */
export function newInstanceId(): string {
  return `${hostname()}-${randomBytes(3).toString('hex')}`;
}

/**
 * The only instance of a SQLite data directory (the instance lock refuses a second): always the
 * leader. Instances sharing PostgreSQL elect theirs (src/storage/postgres/leadership.ts).
 */
export function soleInstance(id = newInstanceId()): Instance {
  return { id, role: () => 'leader' };
}
