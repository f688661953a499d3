CREATE TABLE "api_key_usage" (
	"key_id" text PRIMARY KEY NOT NULL,
	"last_used_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"scopes" text NOT NULL,
	"allowed_domains" text NOT NULL,
	"store_id" text,
	"created_at" bigint NOT NULL,
	"revoked_at" bigint,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "leads" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"repeat_of" text,
	"verified" boolean DEFAULT false NOT NULL,
	"token_hash" text,
	"token_issued_at" bigint,
	"token_revoked_at" bigint,
	"verified_at" bigint,
	"first_scan_at" bigint,
	"created_at" bigint NOT NULL,
	CONSTRAINT "leads_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"store_id" text NOT NULL,
	"payload" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"run_at" bigint NOT NULL,
	"lease_until" bigint,
	"last_error" text,
	"created_at" bigint NOT NULL,
	"finished_at" bigint
);
--> statement-breakpoint
CREATE TABLE "store_events" (
	"id" text PRIMARY KEY NOT NULL,
	"store_id" text NOT NULL,
	"kind" text NOT NULL,
	"occurred_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stores" (
	"id" text PRIMARY KEY NOT NULL,
	"platform" text NOT NULL,
	"domain" text NOT NULL,
	"platform_ref" text NOT NULL,
	"currency" text,
	"status" text NOT NULL,
	"credential_kind" text NOT NULL,
	"credentials" text NOT NULL,
	"webhook_secret" text,
	"hook_status" text NOT NULL,
	"hook_error" text,
	"hook_topics" text NOT NULL,
	"hooks_registered_at" bigint,
	"hooks_confirmed_at" bigint,
	"deactivated_at" bigint,
	"signals_withdrawn_at" bigint,
	"disconnected_at" bigint,
	"sync_paused_at" bigint,
	"settings" text DEFAULT '{}' NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "catalog_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"store_id" text NOT NULL,
	"type" text NOT NULL,
	"entry_id" text NOT NULL,
	"handle" text,
	"title" text DEFAULT '' NOT NULL,
	"url" text,
	"platform_updated_at" bigint,
	"listed_at" bigint NOT NULL,
	"synced_at" bigint NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "product_variants" (
	"product_row_id" text NOT NULL,
	"position" integer NOT NULL,
	"variant_id" text NOT NULL,
	"title" text,
	"sku" text,
	"barcode" text,
	"mpn" text,
	"price" text,
	"compare_at_price" text,
	"availability" text,
	"options" text NOT NULL,
	"image" text,
	"url" text,
	CONSTRAINT "product_variants_product_row_id_position_pk" PRIMARY KEY("product_row_id","position")
);
--> statement-breakpoint
CREATE TABLE "products" (
	"id" text PRIMARY KEY NOT NULL,
	"store_id" text NOT NULL,
	"product_id" text NOT NULL,
	"handle" text,
	"title" text DEFAULT '' NOT NULL,
	"description_html" text,
	"description_text" text,
	"price" text,
	"currency" text,
	"availability" text,
	"sku" text,
	"barcode" text,
	"mpn" text,
	"brand" text,
	"images" text NOT NULL,
	"url" text,
	"options" text DEFAULT '[]' NOT NULL,
	"platform_updated_at" bigint NOT NULL,
	"raw" text,
	"removed_at" bigint,
	"listed_at" bigint,
	"synced_at" bigint NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "order_signals" (
	"id" text PRIMARY KEY NOT NULL,
	"store_id" text NOT NULL,
	"topic" text NOT NULL,
	"order_id" text NOT NULL,
	"status" text,
	"received_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"store_id" text NOT NULL,
	"platform" text NOT NULL,
	"topic" text NOT NULL,
	"dedupe_key" text,
	"product_id" text,
	"outcome" text NOT NULL,
	"reason" text,
	"duplicates" bigint DEFAULT 0 NOT NULL,
	"received_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scans" (
	"id" text PRIMARY KEY NOT NULL,
	"hostname" text NOT NULL,
	"url" text NOT NULL,
	"scanned_at" bigint NOT NULL,
	"received_at" bigint NOT NULL,
	"country" text,
	"platform" text,
	"platform_confidence" double precision,
	"page_type" text,
	"grade" text NOT NULL,
	"percentage" double precision NOT NULL,
	"svc_detected" boolean,
	"svc_version" text,
	"vertical" text,
	"has_title" boolean,
	"has_description" boolean,
	"has_json_ld" boolean,
	"has_open_graph" boolean,
	"has_h1" boolean,
	"has_canonical" boolean,
	"has_robots" boolean,
	"signals" text NOT NULL,
	"quality" text NOT NULL,
	"data" text NOT NULL,
	"trust" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "faq_entity_changes" (
	"store_id" text NOT NULL,
	"entity_type" text NOT NULL,
	"entity_ref" text NOT NULL,
	"changed_at" bigint NOT NULL,
	CONSTRAINT "faq_entity_changes_store_id_entity_type_entity_ref_pk" PRIMARY KEY("store_id","entity_type","entity_ref")
);
--> statement-breakpoint
CREATE TABLE "faq_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"store_id" text NOT NULL,
	"entity_type" text NOT NULL,
	"entity_ref" text NOT NULL,
	"question" text NOT NULL,
	"answer" text NOT NULL,
	"position" integer DEFAULT 0 NOT NULL,
	"status" text NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "product_enrichments" (
	"product_row_id" text PRIMARY KEY NOT NULL,
	"store_id" text NOT NULL,
	"summary" text NOT NULL,
	"highlights" text NOT NULL,
	"attributes" text NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "console_sessions" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"key_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	"last_seen_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "health_probe" (
	"id" integer PRIMARY KEY GENERATED BY DEFAULT AS IDENTITY (sequence name "health_probe_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"written_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "catalog_syncs" (
	"store_id" text NOT NULL,
	"kind" text NOT NULL,
	"run_id" text NOT NULL,
	"trigger" text NOT NULL,
	"status" text NOT NULL,
	"cursor" text,
	"page_span" text,
	"pages" bigint DEFAULT 0 NOT NULL,
	"items" bigint DEFAULT 0 NOT NULL,
	"swept_through" text,
	"removed" bigint DEFAULT 0 NOT NULL,
	"error" text,
	"started_at" bigint NOT NULL,
	"finished_at" bigint,
	"last_completed_at" bigint,
	"failed_passes" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "catalog_syncs_store_id_kind_pk" PRIMARY KEY("store_id","kind")
);
--> statement-breakpoint
ALTER TABLE "api_key_usage" ADD CONSTRAINT "api_key_usage_key_id_api_keys_id_fk" FOREIGN KEY ("key_id") REFERENCES "public"."api_keys"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "store_events" ADD CONSTRAINT "store_events_store_id_stores_id_fk" FOREIGN KEY ("store_id") REFERENCES "public"."stores"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_entries" ADD CONSTRAINT "catalog_entries_store_id_stores_id_fk" FOREIGN KEY ("store_id") REFERENCES "public"."stores"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_variants" ADD CONSTRAINT "product_variants_product_row_id_products_id_fk" FOREIGN KEY ("product_row_id") REFERENCES "public"."products"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "products" ADD CONSTRAINT "products_store_id_stores_id_fk" FOREIGN KEY ("store_id") REFERENCES "public"."stores"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "faq_entries" ADD CONSTRAINT "faq_entries_store_id_stores_id_fk" FOREIGN KEY ("store_id") REFERENCES "public"."stores"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_enrichments" ADD CONSTRAINT "product_enrichments_product_row_id_products_id_fk" FOREIGN KEY ("product_row_id") REFERENCES "public"."products"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_enrichments" ADD CONSTRAINT "product_enrichments_store_id_stores_id_fk" FOREIGN KEY ("store_id") REFERENCES "public"."stores"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "console_sessions" ADD CONSTRAINT "console_sessions_key_id_api_keys_id_fk" FOREIGN KEY ("key_id") REFERENCES "public"."api_keys"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_syncs" ADD CONSTRAINT "catalog_syncs_store_id_stores_id_fk" FOREIGN KEY ("store_id") REFERENCES "public"."stores"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_store_id_idx" ON "api_keys" USING btree ("store_id");--> statement-breakpoint
CREATE UNIQUE INDEX "leads_email_unique" ON "leads" USING btree ("email") WHERE repeat_of IS NULL;--> statement-breakpoint
CREATE INDEX "leads_created_idx" ON "leads" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "leads_unused_idx" ON "leads" USING btree ("created_at") WHERE verified = false AND first_scan_at IS NULL;--> statement-breakpoint
CREATE INDEX "jobs_due_idx" ON "jobs" USING btree ("status","run_at") WHERE status IN ('queued', 'running');--> statement-breakpoint
CREATE INDEX "jobs_finished_idx" ON "jobs" USING btree ("finished_at") WHERE status IN ('done', 'dead');--> statement-breakpoint
CREATE INDEX "store_events_store_idx" ON "store_events" USING btree ("store_id","occurred_at");--> statement-breakpoint
CREATE INDEX "store_events_occurred_idx" ON "store_events" USING btree ("occurred_at");--> statement-breakpoint
CREATE UNIQUE INDEX "stores_platform_ref_idx" ON "stores" USING btree ("platform","platform_ref");--> statement-breakpoint
CREATE UNIQUE INDEX "catalog_entries_store_entry_idx" ON "catalog_entries" USING btree ("store_id","type","entry_id");--> statement-breakpoint
CREATE INDEX "catalog_entries_store_handle_idx" ON "catalog_entries" USING btree ("store_id","type","handle");--> statement-breakpoint
CREATE UNIQUE INDEX "products_store_product_idx" ON "products" USING btree ("store_id","product_id");--> statement-breakpoint
CREATE INDEX "products_store_idx" ON "products" USING btree ("store_id","id");--> statement-breakpoint
CREATE INDEX "order_signals_received_idx" ON "order_signals" USING btree ("received_at");--> statement-breakpoint
CREATE INDEX "order_signals_order_idx" ON "order_signals" USING btree ("order_id");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_dedupe_idx" ON "webhook_deliveries" USING btree ("store_id","dedupe_key") WHERE dedupe_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_received_idx" ON "webhook_deliveries" USING btree ("received_at");--> statement-breakpoint
CREATE INDEX "scans_hostname_scanned_at_idx" ON "scans" USING btree ("hostname","scanned_at","country","platform","page_type","grade");--> statement-breakpoint
CREATE INDEX "scans_badge_idx" ON "scans" USING btree ("hostname","trust","received_at");--> statement-breakpoint
CREATE INDEX "scans_scanned_at_url_idx" ON "scans" USING btree ("scanned_at","url","country","platform","page_type","grade");--> statement-breakpoint
CREATE INDEX "faq_entries_entity_idx" ON "faq_entries" USING btree ("store_id","entity_type","entity_ref","status","position","created_at");--> statement-breakpoint
CREATE INDEX "faq_entries_store_status_idx" ON "faq_entries" USING btree ("store_id","status","id");--> statement-breakpoint
CREATE INDEX "product_enrichments_store_idx" ON "product_enrichments" USING btree ("store_id");--> statement-breakpoint
CREATE INDEX "console_sessions_key_id_idx" ON "console_sessions" USING btree ("key_id");--> statement-breakpoint
CREATE INDEX "console_sessions_last_seen_at_idx" ON "console_sessions" USING btree ("last_seen_at");