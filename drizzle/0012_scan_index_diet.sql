DROP INDEX `scans_country_scanned_at_idx`;--> statement-breakpoint
DROP INDEX `scans_platform_scanned_at_idx`;--> statement-breakpoint
DROP INDEX `scans_page_type_scanned_at_idx`;--> statement-breakpoint
DROP INDEX `scans_grade_scanned_at_idx`;--> statement-breakpoint
DROP INDEX `scans_stats_idx`;--> statement-breakpoint
DROP INDEX `scans_svc_detected_idx`;--> statement-breakpoint
DROP INDEX `scans_hostname_scanned_at_idx`;--> statement-breakpoint
DROP INDEX `scans_scanned_at_url_idx`;--> statement-breakpoint
CREATE INDEX `scans_hostname_scanned_at_idx` ON `scans` (`hostname`,`scanned_at`,`country`,`platform`,`page_type`,`grade`);--> statement-breakpoint
CREATE INDEX `scans_scanned_at_url_idx` ON `scans` (`scanned_at`,`url`,`country`,`platform`,`page_type`,`grade`);