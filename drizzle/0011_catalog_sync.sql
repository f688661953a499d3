CREATE TABLE `catalog_syncs` (
	`store_id` text NOT NULL,
	`kind` text NOT NULL,
	`run_id` text NOT NULL,
	`trigger` text NOT NULL,
	`status` text NOT NULL,
	`cursor` text,
	`pages` integer DEFAULT 0 NOT NULL,
	`items` integer DEFAULT 0 NOT NULL,
	`error` text,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`last_completed_at` integer,
	PRIMARY KEY(`store_id`, `kind`),
	FOREIGN KEY (`store_id`) REFERENCES `stores`(`id`) ON UPDATE no action ON DELETE no action
);
