CREATE TABLE `scan_rollup_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`watermark` integer NOT NULL,
	`months_from` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `scan_rollups` (
	`cuboid` integer NOT NULL,
	`country` text NOT NULL,
	`platform` text NOT NULL,
	`page_type` text NOT NULL,
	`grade` text NOT NULL,
	`day` integer NOT NULL,
	`scans` integer NOT NULL,
	`percentage_sum` real NOT NULL,
	`present_title` integer NOT NULL,
	`reported_title` integer NOT NULL,
	`present_description` integer NOT NULL,
	`reported_description` integer NOT NULL,
	`present_json_ld` integer NOT NULL,
	`reported_json_ld` integer NOT NULL,
	`present_open_graph` integer NOT NULL,
	`reported_open_graph` integer NOT NULL,
	`present_h1` integer NOT NULL,
	`reported_h1` integer NOT NULL,
	`present_canonical` integer NOT NULL,
	`reported_canonical` integer NOT NULL,
	`present_robots` integer NOT NULL,
	`reported_robots` integer NOT NULL,
	`hostnames` blob NOT NULL,
	PRIMARY KEY(`cuboid`, `country`, `platform`, `page_type`, `grade`, `day`)
);
--> statement-breakpoint
CREATE INDEX `scan_rollups_platform_idx` ON `scan_rollups` (`cuboid`,`platform`,`page_type`,`country`,`grade`,`day`);