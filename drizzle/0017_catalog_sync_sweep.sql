ALTER TABLE `catalog_syncs` ADD `swept_through` text;--> statement-breakpoint
ALTER TABLE `catalog_syncs` ADD `removed` integer DEFAULT 0 NOT NULL;