DROP TABLE `scan_hostname_rollups`;--> statement-breakpoint
DROP TABLE `scan_rollup_state`;--> statement-breakpoint
DROP TABLE `scan_rollups`;