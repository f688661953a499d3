ALTER TABLE `stores` ADD `disconnected_at` integer;--> statement-breakpoint
ALTER TABLE `stores` ADD `sync_paused_at` integer;--> statement-breakpoint
ALTER TABLE `catalog_syncs` ADD `failed_passes` integer DEFAULT 0 NOT NULL;