// The PostgreSQL scan roller's Worker (rollups-in-worker.ts): a pool of its own to the database, on
// which it folds scans and runs scan retention (scan-rollups.ts). The fold adds up every scan of a
// batch into its cells in JS and merges their hostname sketches, seconds of CPU for a backlog of
// 100,000 scans: on the request thread that held the event loop for as long. The tables each batch
// wrote are posted back as they commit, for the request thread's change feed.
import { answerRollerRequests } from '../rollups-in-worker.ts';
import { openPostgresClient, type PostgresClient } from './client.ts';
import { postgresScanRollups } from './scan-rollups.ts';

declare const self: Worker;

let client: PostgresClient | null = null;
answerRollerRequests<{ url: string; applicationName: string; batchScans?: number }>(
  self,
  ({ url, applicationName, batchScans }) => {
    // Two connections: a batch's transaction, and the next statement of retention beside it.
    client = openPostgresClient(url, { max: 2, applicationName });
    return postgresScanRollups(client, { wrote: (tables) => postMessage({ wrote: [...tables] }) }, batchScans);
  },
  () => client?.close(),
);
