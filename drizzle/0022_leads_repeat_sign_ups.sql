DROP INDEX `leads_email_unique`;--> statement-breakpoint
ALTER TABLE `leads` ADD `repeat_of` text;--> statement-breakpoint
CREATE UNIQUE INDEX `leads_email_unique` ON `leads` (`email`) WHERE repeat_of IS NULL;