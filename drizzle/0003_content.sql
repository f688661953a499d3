CREATE TABLE `faq_entity_changes` (
	`store_id` text NOT NULL,
	`entity_type` text NOT NULL,
	`entity_ref` text NOT NULL,
	`changed_at` integer NOT NULL,
	PRIMARY KEY(`store_id`, `entity_type`, `entity_ref`)
);
--> statement-breakpoint
CREATE TABLE `faq_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`store_id` text NOT NULL,
	`entity_type` text NOT NULL,
	`entity_ref` text NOT NULL,
	`question` text NOT NULL,
	`answer` text NOT NULL,
	`position` integer DEFAULT 0 NOT NULL,
	`status` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`store_id`) REFERENCES `stores`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `faq_entries_entity_idx` ON `faq_entries` (`store_id`,`entity_type`,`entity_ref`,`status`,`position`,`created_at`);--> statement-breakpoint
CREATE TABLE `product_enrichments` (
	`product_row_id` text PRIMARY KEY NOT NULL,
	`store_id` text NOT NULL,
	`summary` text NOT NULL,
	`highlights` text NOT NULL,
	`attributes` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`product_row_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`store_id`) REFERENCES `stores`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `product_enrichments_store_idx` ON `product_enrichments` (`store_id`);