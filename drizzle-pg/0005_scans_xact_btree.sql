DROP INDEX "scans_xact_idx";--> statement-breakpoint
CREATE INDEX "scans_xact_idx" ON "scans" USING btree ("xact");