ALTER TABLE `products` RENAME COLUMN "gtin" TO "barcode";--> statement-breakpoint
CREATE TABLE `product_variants` (
	`product_row_id` text NOT NULL,
	`position` integer NOT NULL,
	`variant_id` text NOT NULL,
	`title` text,
	`sku` text,
	`barcode` text,
	`mpn` text,
	`price` text,
	`compare_at_price` text,
	`availability` text,
	`options` text NOT NULL,
	`image` text,
	`url` text,
	PRIMARY KEY(`product_row_id`, `position`),
	FOREIGN KEY (`product_row_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `products` ADD `mpn` text;--> statement-breakpoint
ALTER TABLE `products` ADD `options` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `stores` ADD `settings` text DEFAULT '{}' NOT NULL;