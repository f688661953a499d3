CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`store_id` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`run_at` integer NOT NULL,
	`lease_until` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `jobs_due_idx` ON `jobs` (`status`,`run_at`) WHERE status IN ('queued', 'running');--> statement-breakpoint
CREATE TABLE `store_events` (
	`id` text PRIMARY KEY NOT NULL,
	`store_id` text NOT NULL,
	`kind` text NOT NULL,
	`occurred_at` integer NOT NULL,
	FOREIGN KEY (`store_id`) REFERENCES `stores`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `store_events_store_idx` ON `store_events` (`store_id`,`occurred_at`);--> statement-breakpoint
CREATE TABLE `stores` (
	`id` text PRIMARY KEY NOT NULL,
	`platform` text NOT NULL,
	`domain` text NOT NULL,
	`platform_ref` text NOT NULL,
	`currency` text,
	`status` text NOT NULL,
	`credential_kind` text NOT NULL,
	`credentials` text NOT NULL,
	`webhook_secret` text,
	`hook_status` text NOT NULL,
	`hook_error` text,
	`hook_topics` text NOT NULL,
	`hooks_registered_at` integer,
	`hooks_confirmed_at` integer,
	`deactivated_at` integer,
	`signals_withdrawn_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `stores_platform_ref_idx` ON `stores` (`platform`,`platform_ref`);--> statement-breakpoint
CREATE TABLE `products` (
	`id` text PRIMARY KEY NOT NULL,
	`store_id` text NOT NULL,
	`product_id` text NOT NULL,
	`handle` text,
	`title` text DEFAULT '' NOT NULL,
	`description_html` text,
	`description_text` text,
	`price` text,
	`currency` text,
	`availability` text,
	`sku` text,
	`gtin` text,
	`brand` text,
	`images` text NOT NULL,
	`url` text,
	`platform_updated_at` integer NOT NULL,
	`raw` text,
	`removed_at` integer,
	`synced_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`store_id`) REFERENCES `stores`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `products_store_product_idx` ON `products` (`store_id`,`product_id`);--> statement-breakpoint
CREATE INDEX `products_store_idx` ON `products` (`store_id`,`id`);--> statement-breakpoint
CREATE TABLE `order_signals` (
	`id` text PRIMARY KEY NOT NULL,
	`store_id` text NOT NULL,
	`topic` text NOT NULL,
	`order_id` text NOT NULL,
	`status` text,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `order_signals_store_idx` ON `order_signals` (`store_id`,`received_at`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`store_id` text NOT NULL,
	`platform` text NOT NULL,
	`topic` text NOT NULL,
	`dedupe_key` text,
	`product_id` text,
	`outcome` text NOT NULL,
	`duplicates` integer DEFAULT 0 NOT NULL,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_dedupe_idx` ON `webhook_deliveries` (`store_id`,`dedupe_key`) WHERE dedupe_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_store_idx` ON `webhook_deliveries` (`store_id`,`received_at`);