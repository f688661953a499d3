DROP INDEX `scans_country_idx`;--> statement-breakpoint
DROP INDEX `scans_platform_idx`;--> statement-breakpoint
DROP INDEX `scans_page_type_idx`;--> statement-breakpoint
DROP INDEX `scans_grade_idx`;--> statement-breakpoint
CREATE INDEX `scans_country_scanned_at_idx` ON `scans` (`country`,`scanned_at`);--> statement-breakpoint
CREATE INDEX `scans_platform_scanned_at_idx` ON `scans` (`platform`,`scanned_at`);--> statement-breakpoint
CREATE INDEX `scans_page_type_scanned_at_idx` ON `scans` (`page_type`,`scanned_at`);--> statement-breakpoint
CREATE INDEX `scans_grade_scanned_at_idx` ON `scans` (`grade`,`scanned_at`);--> statement-breakpoint
CREATE INDEX `scans_stats_idx` ON `scans` (`scanned_at`,`hostname`,`country`,`platform`,`page_type`,`grade`,`percentage`,`has_title`,`has_description`,`has_json_ld`,`has_open_graph`,`has_h1`,`has_canonical`,`has_robots`);