ALTER TABLE `leads` ADD `first_scan_at` integer;--> statement-breakpoint
-- Leads from before svc recorded first scans may have sent some: they count as having sent one at sign-up, so retention never deletes them.
UPDATE `leads` SET `first_scan_at` = `created_at`;--> statement-breakpoint
CREATE INDEX `leads_unused_idx` ON `leads` (`created_at`) WHERE verified = 0 AND first_scan_at IS NULL;--> statement-breakpoint
CREATE INDEX `jobs_finished_idx` ON `jobs` (`finished_at`) WHERE status IN ('done', 'dead');--> statement-breakpoint
CREATE INDEX `store_events_occurred_idx` ON `store_events` (`occurred_at`);--> statement-breakpoint
CREATE INDEX `order_signals_received_idx` ON `order_signals` (`received_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_received_idx` ON `webhook_deliveries` (`received_at`);