CREATE TABLE `console_sessions` (
	`id_hash` text PRIMARY KEY NOT NULL,
	`key_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `console_sessions_key_id_idx` ON `console_sessions` (`key_id`);--> statement-breakpoint
CREATE INDEX `console_sessions_last_seen_at_idx` ON `console_sessions` (`last_seen_at`);--> statement-breakpoint
CREATE INDEX `faq_entries_store_status_idx` ON `faq_entries` (`store_id`,`status`,`id`);