ALTER TABLE `scans` ADD `trust` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `scans_badge_idx` ON `scans` (`hostname`,`trust`,`received_at`);