CREATE TABLE `hook_ping_windows` (
	`store_id` text PRIMARY KEY NOT NULL,
	`opened_at` integer NOT NULL,
	`closes_at` integer NOT NULL,
	FOREIGN KEY (`store_id`) REFERENCES `stores`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `jobs` ADD `active_key` text;--> statement-breakpoint
-- The unfinished catalogue-sync jobs queued once per kind and store before this key existed get it (one each).
UPDATE `jobs` SET `active_key` = `kind` || ':' || `store_id` WHERE `kind` LIKE 'catalog-sync.%' AND `status` IN ('queued', 'running') AND `id` = (SELECT min(other.id) FROM `jobs` other WHERE other.kind = `jobs`.kind AND other.store_id = `jobs`.store_id AND other.status IN ('queued', 'running'));--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_active_key_idx` ON `jobs` (`active_key`) WHERE status IN ('queued', 'running');