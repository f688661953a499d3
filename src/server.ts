import { createApp } from './app.ts';
import { listenUrl, withListenPort, type Config } from './config.ts';
import { migrateDatabase, openDatabase } from './db/index.ts';
import { systemClock } from './lib/clock.ts';
import { createWebhookServices } from './webhooks/services.ts';
import { loadGeo } from './geo/lookup.ts';
import { bulkBodyLimit } from './telemetry/pipeline.ts';
import { createScanWriter } from './telemetry/writer.ts';
import { createScanRetention } from './scans/retention.ts';
import { createScanRollups } from './scans/rollups.ts';
import { buildWidget } from './widget/bundle.ts';
import { loadConsolePage } from './console/routes.ts';
import { loadLandingPage } from './landing/routes.ts';

export interface RunningServer {
  url: string;
  baseUrl: string;
  migrationsApplied: number;
  /** Stop accepting, let in-flight requests and the job in hand finish, flush queued writes, then close the database. Safe to call twice. */
  shutdown(): Promise<void>;
}

/** A free TCP port on `hostname`, found by binding port 0 and releasing it. */
function freePort(hostname: string): number {
  const probe = Bun.serve({ hostname, port: 0, fetch: () => new Response(null, { status: 503 }) });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

export async function startServer(requested: Config): Promise<RunningServer> {
  // Port 0 means "any free port": pick it before the app is built, so the default base URL (used in
  // signal links and hook registration) names the port actually served.
  const config = requested.http.port === 0 ? withListenPort(requested, freePort(requested.http.hostname)) : requested;
  const database = openDatabase(config.databaseFile);
  const { applied } = migrateDatabase(database);
  const widget = await buildWidget();
  const webhooks = createWebhookServices(database, config, systemClock);
  const geo = await loadGeo(config.geoipDb);
  const scanWriter = createScanWriter(database.sqlite);
  const pages = { landing: await loadLandingPage(), console: await loadConsolePage() };
  const app = createApp({ config, database, widget, webhooks, geo, scanWriter, pages });
  app.listen({
    hostname: config.http.hostname,
    port: config.http.port,
    // A backstop only: the app refuses oversize bodies itself with the JSON 413 (declared ones before
    // reading, streamed ones while reading). Bun's own transport-level 413 has no body, so it must
    // not fire first.
    maxRequestBodySize: 2 * bulkBodyLimit(config.maxBodyBytes),
  });
  const server = app.server!;
  // Background work (platform-B product fetches) queued in the database, including any left by a previous run.
  webhooks.runner.start();
  const rollups = createScanRollups(database.sqlite);
  rollups.start();
  const retention = createScanRetention(database.sqlite, systemClock, config.scanRetentionDays, rollups);
  retention.start();

  let stopping: Promise<void> | null = null;
  const shutdown = () => {
    stopping ??= (async () => {
      await server.stop(false);
      await webhooks.runner.stop();
      await retention.stop();
      await rollups.stop();
      scanWriter.close(); // rows still queued are committed before the database closes
      database.close();
    })();
    return stopping;
  };

  return { url: listenUrl({ hostname: server.hostname ?? config.http.hostname, port: server.port ?? config.http.port }), baseUrl: config.baseUrl, migrationsApplied: applied, shutdown };
}
