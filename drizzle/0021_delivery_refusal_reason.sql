ALTER TABLE `webhook_deliveries` ADD `reason` text;--> statement-breakpoint
CREATE INDEX `order_signals_order_idx` ON `order_signals` (`order_id`);