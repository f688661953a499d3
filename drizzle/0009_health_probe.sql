CREATE TABLE `health_probe` (
	`id` integer PRIMARY KEY NOT NULL,
	`written_at` integer NOT NULL
);
