CREATE TABLE `api_key_usage` (
	`key_id` text PRIMARY KEY NOT NULL,
	`last_used_at` integer NOT NULL,
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
