CREATE TABLE `scan_hostname_rollups` (
	`hostname` text PRIMARY KEY NOT NULL,
	`scans` integer NOT NULL,
	`last_scanned_at` integer NOT NULL
);
