import { createApp } from './app.ts';
import type { Config } from './config.ts';
import { migrateDatabase, openDatabase } from './db/index.ts';
import { loadGeo } from './geo/lookup.ts';
import { createScanWriter } from './telemetry/writer.ts';
import { buildWidget } from './widget/bundle.ts';

export interface RunningServer {
  url: string;
  migrationsApplied: number;
  /** Stop accepting, let in-flight requests finish, flush queued writes, then close the database. Safe to call twice. */
  shutdown(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
  const database = openDatabase(config.databaseFile);
  const { applied } = migrateDatabase(database);
  const widget = await buildWidget();
  const geo = await loadGeo(config.geoipDb);
  const scanWriter = createScanWriter(database.sqlite);
  const app = createApp({ config, database, widget, geo, scanWriter });
  app.listen({
    hostname: config.http.hostname,
    port: config.http.port,
    // Transport-level ceiling for bodies without Content-Length; the app answers declared ones itself.
    maxRequestBodySize: config.maxBodyBytes,
  });
  const server = app.server!;

  let stopping: Promise<void> | null = null;
  const shutdown = () => {
    stopping ??= (async () => {
      await server.stop(false);
      scanWriter.close(); // rows still queued are committed before the database closes
      database.close();
    })();
    return stopping;
  };

  const host = server.hostname?.includes(':') ? `[${server.hostname}]` : server.hostname;
  return { url: `http://${host}:${server.port}`, migrationsApplied: applied, shutdown };
}
