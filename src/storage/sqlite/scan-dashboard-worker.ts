// A dashboard Worker (scan-dashboard-workers.ts): its own query-only connection to the
// database with the rollups file attached, on which it answers the dashboard's reads one at a time.
import type { Database } from 'bun:sqlite';
import { openStatsConnection } from './db/rollups-file.ts';
import { createDashboardReader, type DashboardReader } from './scan-dashboard.ts';

declare const self: Worker;

/** The reads a dashboard Worker answers: DashboardReader's methods. */
export type DashboardRead = keyof DashboardReader;

interface Request {
  id: number;
  op: 'open' | 'close' | DashboardRead;
  file?: string;
  args?: unknown[];
}

let sqlite: Database | null = null;
let reader: DashboardReader | null = null;

function run(request: Request): unknown {
  switch (request.op) {
    case 'open':
      sqlite = openStatsConnection(request.file!);
      reader = createDashboardReader(sqlite);
      return null;
    case 'close':
      sqlite?.close();
      sqlite = reader = null;
      return null;
    default:
      return (reader![request.op] as (...args: unknown[]) => unknown)(...request.args!);
  }
}

self.onmessage = ({ data }: MessageEvent<Request>) => {
  try {
    postMessage({ id: data.id, ok: true, result: run(data) });
  } catch (error) {
    postMessage({ id: data.id, ok: false, error: error instanceof Error ? error.message : String(error) });
  }
};
