CREATE TABLE `catalog_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`store_id` text NOT NULL,
	`type` text NOT NULL,
	`entry_id` text NOT NULL,
	`handle` text,
	`title` text DEFAULT '' NOT NULL,
	`url` text,
	`platform_updated_at` integer,
	`listed_at` integer NOT NULL,
	`synced_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`store_id`) REFERENCES `stores`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `catalog_entries_store_entry_idx` ON `catalog_entries` (`store_id`,`type`,`entry_id`);--> statement-breakpoint
CREATE INDEX `catalog_entries_store_handle_idx` ON `catalog_entries` (`store_id`,`type`,`handle`);