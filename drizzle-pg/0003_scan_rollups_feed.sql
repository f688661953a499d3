-- The rollup state's one row, with nothing folded and rollup rows allowed on any day
-- (src/db/postgres/schema/scan-rollups.ts), and the change feed's trigger on each rollup table
-- (drizzle-pg/0001_change_feed.sql says why every table has one).
INSERT INTO "scan_rollup_state" ("id", "watermark", "days_from", "months_from") VALUES (1, 0, -9007199254740991, -9007199254740991);
--> statement-breakpoint
CREATE TRIGGER "scan_rollups_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "scan_rollups" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "scan_hostname_rollups_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "scan_hostname_rollups" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "scan_rollup_state_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "scan_rollup_state" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
