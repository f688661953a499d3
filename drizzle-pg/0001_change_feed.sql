-- The change feed (src/storage/postgres/changes.ts): every statement that writes one of svc's tables
-- notifies channel svc_changes with the table's name, delivered when its transaction commits (and
-- never when it rolls back; PostgreSQL sends one per table per transaction). Any writer is seen:
-- another instance, the CLI, psql. A table added later gets its trigger in its own migration
-- (test/storage/changes.test.ts checks that every table has one).
CREATE FUNCTION svc_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_changes', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "api_key_usage_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "api_key_usage" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "api_keys_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "api_keys" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "leads_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "leads" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "jobs_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "jobs" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "store_events_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "store_events" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "stores_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "stores" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "catalog_entries_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "catalog_entries" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "product_variants_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "product_variants" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "products_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "products" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "order_signals_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "order_signals" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "webhook_deliveries_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "webhook_deliveries" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "scans_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "scans" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "faq_entity_changes_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "faq_entity_changes" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "faq_entries_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "faq_entries" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "product_enrichments_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "product_enrichments" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "console_sessions_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "console_sessions" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "health_probe_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "health_probe" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
--> statement-breakpoint
CREATE TRIGGER "catalog_syncs_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "catalog_syncs" FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change();
