CREATE TABLE `scans` (
	`id` text PRIMARY KEY NOT NULL,
	`hostname` text NOT NULL,
	`url` text NOT NULL,
	`scanned_at` integer NOT NULL,
	`received_at` integer NOT NULL,
	`country` text,
	`platform` text,
	`platform_confidence` real,
	`page_type` text,
	`grade` text NOT NULL,
	`percentage` real NOT NULL,
	`svc_detected` integer,
	`svc_version` text,
	`vertical` text,
	`has_title` integer,
	`has_description` integer,
	`has_json_ld` integer,
	`has_open_graph` integer,
	`has_h1` integer,
	`has_canonical` integer,
	`has_robots` integer,
	`signals` text NOT NULL,
	`quality` text NOT NULL,
	`data` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `scans_hostname_scanned_at_idx` ON `scans` (`hostname`,`scanned_at`);--> statement-breakpoint
CREATE INDEX `scans_scanned_at_url_idx` ON `scans` (`scanned_at`,`url`);--> statement-breakpoint
CREATE INDEX `scans_country_idx` ON `scans` (`country`);--> statement-breakpoint
CREATE INDEX `scans_platform_idx` ON `scans` (`platform`);--> statement-breakpoint
CREATE INDEX `scans_page_type_idx` ON `scans` (`page_type`);--> statement-breakpoint
CREATE INDEX `scans_grade_idx` ON `scans` (`grade`);--> statement-breakpoint
CREATE INDEX `scans_svc_detected_idx` ON `scans` (`svc_detected`);