CREATE TABLE "scan_hostname_rollups" (
	"dimension" text NOT NULL,
	"value" text NOT NULL,
	"hostname" text NOT NULL,
	"scans" bigint NOT NULL,
	"last_scanned_at" bigint NOT NULL,
	CONSTRAINT "scan_hostname_rollups_pkey" PRIMARY KEY("dimension","value","hostname")
);
--> statement-breakpoint
CREATE TABLE "scan_rollup_state" (
	"id" integer PRIMARY KEY NOT NULL,
	"watermark" bigint NOT NULL,
	"days_from" bigint NOT NULL,
	"months_from" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scan_rollups" (
	"cuboid" integer NOT NULL,
	"country" text NOT NULL,
	"platform" text NOT NULL,
	"page_type" text NOT NULL,
	"grade" text NOT NULL,
	"day" integer NOT NULL,
	"scans" bigint NOT NULL,
	"percentage_sum" double precision NOT NULL,
	"present_title" bigint NOT NULL,
	"present_description" bigint NOT NULL,
	"present_json_ld" bigint NOT NULL,
	"present_open_graph" bigint NOT NULL,
	"present_h1" bigint NOT NULL,
	"present_canonical" bigint NOT NULL,
	"present_robots" bigint NOT NULL,
	"reported_title" bigint NOT NULL,
	"reported_description" bigint NOT NULL,
	"reported_json_ld" bigint NOT NULL,
	"reported_open_graph" bigint NOT NULL,
	"reported_h1" bigint NOT NULL,
	"reported_canonical" bigint NOT NULL,
	"reported_robots" bigint NOT NULL,
	"hostnames" "bytea" NOT NULL,
	CONSTRAINT "scan_rollups_pkey" PRIMARY KEY("cuboid","country","platform","page_type","grade","day")
);
--> statement-breakpoint
ALTER TABLE "scans" ADD COLUMN "xact" bigint DEFAULT (pg_current_xact_id()::text)::bigint NOT NULL;--> statement-breakpoint
CREATE INDEX "scan_rollups_platform_idx" ON "scan_rollups" USING btree ("cuboid","platform","page_type","country","grade","day");--> statement-breakpoint
CREATE INDEX "scans_xact_idx" ON "scans" USING brin ("xact");