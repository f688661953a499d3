CREATE TABLE "hook_ping_windows" (
	"store_id" text PRIMARY KEY NOT NULL,
	"opened_at" bigint NOT NULL,
	"closes_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "active_key" text;--> statement-breakpoint
ALTER TABLE "hook_ping_windows" ADD CONSTRAINT "hook_ping_windows_store_id_stores_id_fk" FOREIGN KEY ("store_id") REFERENCES "public"."stores"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- The unfinished catalogue-sync jobs queued once per kind and store before this key existed get it (one each).
UPDATE "jobs" SET "active_key" = "kind" || ':' || "store_id" WHERE "kind" LIKE 'catalog-sync.%' AND "status" IN ('queued', 'running') AND "id" = (SELECT min(other.id) FROM "jobs" other WHERE other.kind = "jobs".kind AND other.store_id = "jobs".store_id AND other.status IN ('queued', 'running'));--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_active_key_idx" ON "jobs" USING btree ("active_key") WHERE status IN ('queued', 'running');--> statement-breakpoint
-- The change feed's trigger on the new table (drizzle-pg/0001_change_feed.sql says why every table has one).
CREATE TRIGGER "hook_ping_windows_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "hook_ping_windows" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
